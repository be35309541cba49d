// What differs between the engines a check runs on, behind one interface: how a guest is built for
// the engine (its module and the manifest fields of its ABI), the answers whose form or code
// differs, and what an engine cannot do. A check gets its engine's adapter as CheckContext.engine
// and as the argument of `packs` and `policy`, so one check reads the same on every engine.
import type { ResponseEnvelope } from '../../abi/index.js';
import type { EngineStats } from '../../host/5-host/host.js';
import type { PackSpec, ToolpackSpec } from '../kit/toolpack.js';

/**
 * The engines a check can run on: `helix` runs helix/v1 modules on Helix's own metered engine,
 * `extism` runs extism/v1 plugins on the engine's Extism kernel, `container` covers the work
 * Helix hands to a real outside engine (container toolpacks and `docker.run` on Docker, the
 * `slurm.*` capabilities on a Slurm cluster).
 */
export const ENGINES = ['helix', 'extism', 'container'] as const;
export type Engine = (typeof ENGINES)[number];

/** The guest ABIs of abi/ABI.md. */
export type GuestAbi = 'helix/v1' | 'extism/v1';

/** Where a guest's code runs during a call (ABI-TRAP-001). */
export type Phase = 'start' | 'alloc' | 'execute' | 'dealloc';

/** A call of a tool on the check's host: CheckContext.call. */
export type Call = (tool: string, input?: unknown) => Promise<ResponseEnvelope>;

/** What a module is built with, beyond its entry. */
export interface ModuleOptions {
  /** Pages of its memory (default 1). */
  readonly pages?: number;
  /** The maximum its memory declares (default none). */
  readonly maxPages?: number;
  /** More module fields: functions, tables, memories, data, a start function. */
  readonly extra?: string;
  /** Locals of the entry function, declared before its body. */
  readonly locals?: string;
}

/** One answer the broker gave a guest, as the guest received it. */
export interface CallerAnswer {
  readonly bytes: Buffer;
  readonly text: string;
  readonly json: {
    status: string;
    abi_version: number;
    // biome-ignore lint/suspicious/noExplicitAny: a capability's result is whatever that capability answers
    capability_result?: { name: string; result: any };
    // biome-ignore lint/suspicious/noExplicitAny: error details differ by code
    error?: { code: string; message: string; details: any; hint?: string };
  };
  /** The bulk buffer after the call (helix/v1 bulk calls only; empty otherwise). */
  readonly dump: Buffer;
}

/** A guest that sends the capability requests a check chooses and hands back each answer as it received it. */
export interface CapabilityCaller {
  /** The caller's toolpack, allowlisting `allow`; `manifest` fields over the caller's own (its limits). */
  pack(id: string, allow: readonly string[], manifest?: Record<string, unknown>): PackSpec;
  /** The input of one call that sends `requests` in order (an object is sent as its JSON; bytes as they are). */
  input(requests: readonly unknown[]): unknown;
  /** The answers of a call of the caller that succeeded, in order; a CheckFailure when it did not succeed. */
  answers(r: ResponseEnvelope): CallerAnswer[];
  /** How many requests one call carries: any number on helix/v1 (one run goes on after each answer), one on extism/v1. */
  readonly perCall: number;
  /** Whether a request may be any bytes (helix/v1), or must be a JSON object (extism/v1: the request is the call's input, checked as JSON). */
  readonly anyBytes: boolean;
  /**
   * A guest that sends one request again and again without end (a storm), under a ceiling of
   * `maxCapabilityCalls`, and the input that makes it send `request` (a JSON object).
   */
  storm(id: string, allow: readonly string[], maxCapabilityCalls: number): { pack: PackSpec; input(request: object): unknown };
}

/** Guest modules (WebAssembly text) built for the engine's ABI, each doing the same on every engine. */
export interface EngineGuests {
  /** Answers its input as its output, byte for byte. */
  echo(o?: Pick<ModuleOptions, 'pages'>): string;
  /** Meets its ABI's shape; its entry runs `stmts` (none by default) and answers nothing: for checks of loading, traps and limits. */
  bare(stmts?: string, o?: Omit<ModuleOptions, 'locals'>): string;
  /** Its entry runs `stmts` (which leave nothing) and answers {}. */
  running(stmts: string, o?: ModuleOptions): string;
  /** Its entry computes an i32 with `expr` and answers {"value": N}. */
  number(expr: string, o?: ModuleOptions): string;
  /** Answers `value` (JSON text), whatever its input. */
  answering(value: string): string;
  /** Answers `bytes` bytes of its memory, whatever they hold: an output past any maxOutputBytes a check sets, and no JSON. */
  oversized(bytes: number): string;
  /** Outputs (`output`), sets as its error (`error`, extism/v1), or sends as a capability request (`request`) the bytes its input carries (kit/io-guests.ts bytesInput). */
  bytes(mode: 'output' | 'error' | 'request'): string;
  /** Its one memory is 64-bit (ABI-MEMORY-001). */
  readonly memory64: string;
  /** Its memory is shared (and bounded); its entry runs `stmts`. */
  sharedMemory(stmts: string): string;
  /** Imports env.exfiltrate, outside the ABI, and calls it; `rule` is the requirement a loader names refusing it. */
  readonly outsideImport: { readonly module: string; readonly rule: string };
  /** Counts its calls in a global and in memory (and, per ABI, grown memory or an Extism variable); `fresh` is what it answers on a fresh instance. */
  readonly stateCounter: { readonly module: string; readonly fresh: unknown };
  /** Counts its executions in a global and answers {"value": count}: a re-execution on a kept instance answers otherwise. */
  readonly executionCounter: string;
  /**
   * Makes `calls` capability calls of clock.now_unix, catching whatever each throws, then runs
   * `after`; with `trap` it then traps, and on helix/v1 its helix_panic tries a capability call too.
   */
  storm(calls: number, o?: { after?: string; trap?: boolean }): string;
  /** Passes the broker a pointer (helix/v1) or block offset (extism/v1) naming nothing, catches the fault, answers ok; `details` the fault names. */
  readonly badPointer: { readonly module: string; readonly details: Record<string, unknown> };
  /** Throws an exception of its own, uncaught, from `phase` (one of EngineAdapter.phases). */
  throwing(phase: Phase): string;
  /** Spins inside try/catch_all until its fuel or its deadline runs out. */
  readonly catchingSpin: string;
  /** Recurses inside try/catch_all until its stack runs out; undefined where the kit has no such guest for the ABI (extism/v1). */
  readonly catchingRecursion: string | undefined;
  /**
   * Reports what it finds of an earlier call (flags: 1 a secret in memory, 2 a global, 4 grown
   * memory, 8 an Extism variable) and where alloc placed its input (helix/v1), then plants its own;
   * with `grow` it grows memory too (undefined where the ABI's kit has no growing plant).
   */
  plant(grow: boolean): string | undefined;
  /** What a plant call's output says it found. */
  planted(output: Record<string, unknown>): { flags: number; ptr?: number };
}

/** How a guest's output carries a value. */
export interface OutputForm {
  /** Whether the output is an envelope the host reads (helix/v1), rather than the value itself (extism/v1, ABI-EXTISM-007). */
  readonly enveloped: boolean;
  /** The output a guest writes to answer `value` (JSON text). */
  answer(value: string): string;
  /** The JSON pointer of the answered value inside that output. */
  readonly at: string;
}

/** One engine, as the checks see it. */
export interface EngineAdapter {
  readonly name: Engine;
  /** The ABI of the WebAssembly toolpacks the checks load on this engine (container checks' own toolpacks are helix/v1). */
  readonly abi: GuestAbi;
  /** The export a call enters. */
  readonly entry: 'execute' | 'run';
  /** The manifest fields every toolpack of the ABI carries beyond the kit's defaults (abi and entrypoint for extism/v1, none for helix/v1). */
  readonly manifest: Readonly<Record<string, unknown>>;
  /**
   * A toolpack of `module` for this engine: the ABI's manifest fields, then `manifest`, then
   * `rest` (schemas, a directory name); no manifest at all when there are no fields (helix/v1).
   */
  pack(id: string, module: string | Uint8Array, manifest?: Record<string, unknown>, rest?: Partial<PackSpec>): PackSpec;
  /** The canary every check's host loads (runner.ts): an echo of the engine's ABI. */
  canary(): ToolpackSpec;
  readonly guests: EngineGuests;
  readonly output: OutputForm;
  readonly caller: CapabilityCaller;
  /** The phases a guest's own code runs in (ABI-TRAP-001): start, alloc, execute, dealloc on helix/v1; start and the entry on extism/v1. */
  readonly phases: readonly Phase[];
  /** The phase a fault in `phase` is reported with (extism/v1 runs its start function inside the call: execute, ABI-FINAL-006). */
  reportedPhase(phase: Phase): Phase;
  /** Whether a guest may explain its trap through a helix_panic export (helix/v1, ABI-EXPORT-006). */
  readonly panicExport: boolean;
  /** Whether the loader instantiates a module to check it, so one that cannot be instantiated is refused at load (extism/v1, ABI-EXTISM-001), not at its call. */
  readonly loadInstantiates: boolean;
  /** Whether a guest can end with an error text of its own beside its output (extism/v1 error_set, ABI-EXTISM-008). */
  readonly setsErrors: boolean;
  /** Whether a check can compute a module's exact fuel in its own process (helix/v1: the kit runs the instrumented module as the host does). */
  readonly fuelKnownHere: boolean;
  /** The maxCapabilityCalls decisions.catch-call-ceiling sets on this engine (its expected text names both: 20 on helix/v1, 10 on extism/v1). */
  readonly stormCeiling: number;
  /** The engine's idle workers in a census (EngineStats): the helix/v1 lanes', or the Extism runtime's. */
  workers(stats: EngineStats): EngineStats['workers'];
}
