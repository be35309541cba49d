// What a capability is and what it may reach: a capability gets a narrow context (its tool,
// run, policy, deadline and a few ports), never the host object (abi/ABI.md, "Capability calls").
import type { z } from 'zod';
import type { Policy } from '../abi/index.js';

/** An artifact as a capability sees it: metadata, never a path. */
export interface ArtifactSummary {
  readonly id: string;
  readonly sha256: string;
  readonly size: number;
  readonly type: string;
  readonly compression: 'gzip' | null;
  readonly media_type: string;
  readonly label: string | null;
  readonly created_at: number;
  readonly created_by_run: string | null;
}

/** Artifact access for the current run. */
export interface ArtifactPort {
  stat(id: string): ArtifactSummary;
  /**
   * Bytes [offset, offset+length) of the artifact (of its decompressed content with `decompress`),
   * in a buffer of their own, or in `into` when it is given and holds `length` bytes (then `data`
   * is a view of it); `chunk` is the stored chunk's key when they are exactly one whole chunk.
   */
  read(
    id: string,
    range: { offset: number; length: number; decompress: boolean; into?: Uint8Array },
  ): Promise<{ data: Uint8Array; eof: boolean; chunk?: string }>;
  list(filter: { limit: number; type?: string }): ArtifactSummary[];
  /** Appends to the output under `role`; with `final`, seals it and returns its id (visible when the run ends). */
  write(
    role: string,
    data: Uint8Array,
    final: boolean,
    meta: { type?: string; label?: string },
  ): Promise<{ bytes: number; artifact?: { id: string; sha256: string; size: number } }>;
  /** The declared output under `role` (its type), or undefined when the tool declares no such role. */
  declared(role: string): { readonly type: string } | undefined;
}

/** The tool's own key-value namespace. */
export interface KvPort {
  get(key: string): { found: boolean; value?: unknown };
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(prefix: string, limit: number): string[];
}

/** The run's log (its log artifact) and the audit trail. */
export interface LogPort {
  emit(level: string, event: string, fields: Record<string, unknown>): void;
}

/** Secrets by name, resolved from the policy's sources. */
export interface SecretPort {
  get(name: string): string;
}

/** Time, from the host or (when verifying) from the journal. */
export interface ClockPort {
  nowUnixMs(): number;
}

/**
 * What a capability must remember the moment it happens, not when its run ends: a Slurm job's
 * id, so that neither a replay nor a restart submits it again. Namespaced per tool; no guest
 * reaches it (a guest's kv could forge or drop a record).
 */
export interface CheckpointPort {
  get(key: string): Record<string, unknown> | undefined;
  /** Writes every entry in one transaction, committed when the promise resolves. */
  put(entries: Readonly<Record<string, Record<string, unknown>>>): Promise<void>;
}

/** Files a capability found and checked (a Slurm job's outputs), made artifacts at once. */
export interface ImportPort {
  /**
   * Stores the bytes `source` yields as an artifact whose source is the file at `path` (its real
   * path), visible when the promise resolves; I-REQ-TOO-LARGE past `maxBytes`.
   */
  importStream(
    source: AsyncIterable<Uint8Array>,
    meta: { path: string; mtimeMs: number; maxBytes: number; label?: string; type?: string },
  ): Promise<ArtifactSummary>;
}

/** Everything a capability call may reach. */
export interface CapabilityContext {
  readonly toolId: string;
  readonly runId: string;
  /** The number of this capability call in its run, from 1: the same call of a re-executed guest has the same number. */
  readonly callSeq: number;
  /** The manifest's capability section: allowlist and per-capability settings. */
  readonly manifest: { readonly allow: readonly string[]; readonly network: readonly string[] };
  readonly policy: Policy;
  /** The call's deadline, ms since the epoch: capability waits count against it. */
  readonly deadlineMs: number;
  /** Aborted when the call is cancelled or its deadline passes. */
  readonly signal: AbortSignal;
  readonly artifacts: ArtifactPort;
  readonly kv: KvPort;
  readonly log: LogPort;
  readonly secrets: SecretPort;
  readonly clock: ClockPort;
  readonly checkpoints: CheckpointPort;
  readonly imports: ImportPort;
}

/** How a capability's result is kept in the run's journal. */
export type JournalMode = 'value' | 'digest' | 'redacted';

/** One capability: its schemas, its rules, its implementation. */
export interface CapabilityDefinition<A = unknown, R = unknown> {
  /** The name a guest calls, e.g. `kv.get`. */
  readonly name: string;
  readonly description: string;
  /** Granted only by exact name in a policy, never by a wildcard. */
  readonly privileged: boolean;
  /**
   * For scoped capabilities, the scope a call needs: the allowlist must hold `<name>.<scope>`
   * (`secrets.get.db_password`) and the bare name grants nothing. A method, not a function
   * property, so that a definition with its own argument type still fits the registry's
   * CapabilityDefinition (the broker parses the arguments with `args` before either is called).
   */
  scopeOf?(args: A): string;
  /**
   * How the journal keeps the result: `value` in full; `digest` only its hash, for results an
   * immutable source re-supplies (artifact bytes); `redacted` nothing (secrets).
   */
  readonly journal: JournalMode;
  /**
   * What the journal keeps of the arguments, when not all of them: `artifact.write` keeps its
   * piece's length, not its bytes, which the artifact holds (and which may end in half a secret
   * that the next piece completes: ABI-SECRET-007).
   */
  readonly journalArgs?: (args: Record<string, unknown>) => Record<string, unknown>;
  readonly args: z.ZodType<A>;
  readonly result: z.ZodType<R>;
  invoke(args: A, ctx: CapabilityContext): Promise<R> | R;
}
