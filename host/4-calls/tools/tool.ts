// The one interface every callable tool implements, WebAssembly toolpacks and host built-ins
// alike (one ToolDefinition): a descriptor the pipeline validates and authorizes
// against, an optional snapshot boundary for identity, and execute.
import type { Determinism, GuestOutput, WireError } from '../../../abi/index.js';
import type { RunEffects } from '../broker/broker.js';
import type { RefValidator, Validator } from '../loader/json-schema.js';
import type { JsonSchema } from '../loader/schema-bundle.js';
import type { LoadedPolicy } from '../policy/load-policy.js';
import type { EffectiveLimits, ToolLimits } from '../../../abi/index.js';
import type { Store } from '../../3-store/open-store.js';

/** What the pipeline knows of a tool before running it. */
export interface ToolDescriptor {
  readonly kind: 'wasm' | 'builtin' | 'container';
  readonly id: string;
  readonly version: string;
  readonly contractVersion: string;
  readonly description: string;
  readonly deterministic: Determinism;
  /** The function a request's `fn` must name, if it names one. */
  readonly entrypoint: string;
  /** Capabilities the tool asks for (the manifest's allowlist). */
  readonly capabilities: readonly string[];
  /** The module digest, or null for a built-in. */
  readonly moduleDigest: string | null;
  /** A toolpack's contract digest (host/4-calls/tools/contract-digest.ts), in every run's identity; absent for a built-in. */
  readonly contractDigest?: string;
  /** The tool's limits, capped by the policy, and what they grow by per MiB of input (ABI-BUDGET-*). */
  readonly limits: ToolLimits;
  /** Pages of memory the tool needs to start; a request may not cap memory below this. */
  readonly minMemoryPages: number;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly validateInput: RefValidator;
  readonly validateOutput: Validator;
}

/** What a tool gets to run one call. */
export interface ToolRunContext {
  readonly input: Record<string, unknown>;
  /** The input as UTF-8 JSON, as sent to a guest. */
  readonly inputBytes: Uint8Array;
  readonly limits: EffectiveLimits;
  readonly store: Store;
  readonly policy: LoadedPolicy;
  readonly runId: string;
  /** The snapshot boundary computed for this call, if the tool has one. */
  readonly boundary: Record<string, unknown> | undefined;
  /** The call's deadline, ms since the epoch. */
  readonly deadlineMs: number;
  /** Aborted when the deadline passes or the caller cancels (capabilities stop their waits). */
  readonly signal: AbortSignal;
  /** Aborted when the caller cancels: the engine stops the guest. */
  readonly cancel?: AbortSignal;
  /** Receives the guest's log lines as they are emitted (already scrubbed of secrets). */
  readonly onLog?: (line: { level: string; event: string; fields: Record<string, unknown> }) => void;
  /** Receives a count each time the guest makes a capability call. */
  readonly onCapabilityCall?: (count: number) => void;
}

/** What a guest's run leaves behind: its capability journal, outputs and log lines. */
export type { RunEffects } from '../broker/broker.js';

/** Measurements and effects every outcome carries. */
interface OutcomeCommon {
  readonly fuelUsed: number;
  readonly memoryPages: number;
  /** Journal, sealed outputs and log of a guest that could call capabilities. */
  readonly effects?: RunEffects;
}

/** How a call of a tool ended, before output validation. */
export type ToolOutcome =
  | (OutcomeCommon & { readonly kind: 'output'; readonly output: GuestOutput; readonly outputSha256?: string })
  | (OutcomeCommon & { readonly kind: 'fault'; readonly error: WireError });

/** A callable tool. */
export interface Tool extends ToolDescriptor {
  /**
   * Identity beyond the input for tools over mutable state : e.g. artifact_list's
   * (as_of_created_at, artifact_count), taken when the call arrives and filtered by in run.
   */
  snapshotBoundary?(store: Store, input: Record<string, unknown>): Record<string, unknown>;
  execute(ctx: ToolRunContext): Promise<ToolOutcome>;
}
