// The capability registry: every capability a guest can reach through the broker. A manifest
// that allows a name not served here fails to load (fail-closed), so the list is exact.

/** What the loader and broker need to know of a capability. */
export interface CapabilityDescriptor {
  /** Exact name, e.g. `clock.now_unix`; a `scoped` capability also accepts `<name>.<scope>`. */
  readonly name: string;
  /** Privileged capabilities are granted only by exact name in a policy (DESIGN.md section 7). */
  readonly privileged: boolean;
  /** Whether allow entries may name a scope after the capability name (`secrets.get.db_password`). */
  readonly scoped: boolean;
}

/** The capabilities this host serves. The broker and its capabilities arrive with issue 4. */
export const CAPABILITIES: readonly CapabilityDescriptor[] = [];

/** The descriptor serving an allowlist entry (exact name, or a scoped entry of a scoped capability). */
export function findCapability(entry: string): CapabilityDescriptor | undefined {
  return CAPABILITIES.find((c) => c.name === entry || (c.scoped && entry.startsWith(`${c.name}.`)));
}
