// The limits one call runs under, once the manifest, the policy's ceilings and the request have
// been combined (host/policy/rules.ts computes them): the vocabulary the loader, the tools and
// the engine share.

/** The limits a call runs under. */
export interface EffectiveLimits {
  readonly fuel: number;
  readonly maxMemoryPages: number;
  readonly timeoutMs: number;
  readonly maxInputBytes: number;
  readonly maxOutputBytes: number;
  readonly maxCapabilityCalls: number;
}
