// One extism/v1 call on one plugin, under the same limits as helix/v1 calls. Capability calls
// arrive as the host function `extism:host/user.helix_capability_call`, which Extism runs on the
// main thread, and go to the broker of the call the plugin serves: the same envelopes, allowlist,
// journal and limits as `helix_v1.capability_call`. The first exit the host function throws is the
// call's outcome: Extism stops the plugin's worker at once, and the host function answers nothing
// more (ABI-FINAL-006).
import type { CallContext, Plugin } from '@extism/extism';
import { EXTISM_CAPABILITY_CALL } from '../../abi/index.js';
import { GuestAbort } from './decision.js';
import { classify } from './extism-outcome.js';
import { decodeReport, REPORT_EXPORT, type ShimReport } from './extism-shim.js';
import type { CapabilityHandler, PluginVariant } from './extism-spares.js';
import type { ExecuteResult } from './protocol.js';
import { fault, type RunnerCall } from './runner.js';

const STOPPED = Symbol('stopped');

/** One call's state, shared by the run, the scheduler's stop and the host function. */
export class ExtismCall {
  /** Set when the scheduler stopped the call (deadline, cancel, close). */
  stopped = false;
  plugin: Plugin | undefined;
  /** The first exit the host function threw: the call's outcome from then on. */
  decision: GuestAbort | undefined;
  /** Settles when the call was stopped: a closed plugin's call never settles. */
  readonly whenStopped: Promise<typeof STOPPED>;
  #markStopped!: (s: typeof STOPPED) => void;
  #capabilityFuel = 0;

  constructor(readonly call: RunnerCall<PluginVariant>) {
    this.whenStopped = new Promise((resolve) => (this.#markStopped = resolve));
  }

  /** Ends the call now: its plugin's worker is terminated (plugin.close), as a lane's would be. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.#markStopped(STOPPED);
    void this.plugin?.close();
  }

  /**
   * The host function of this call. Whatever it throws is the decision, and every later call gets
   * it again without reaching the broker. Extism stops the worker when a host function throws, so
   * the plugin cannot catch it; the refusal holds even if a later version did not.
   */
  readonly capabilityCall: CapabilityHandler = async (ctx, offset) => {
    if (this.decision !== undefined) throw this.decision;
    try {
      return await this.#serve(ctx, offset);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const decision = (this.decision ??= err instanceof GuestAbort ? err : new GuestAbort('S-TOOL-WORKER-LOST', `The capability broker failed: ${message}`));
      this.call.decide(decision);
      throw decision;
    }
  };

  async #serve(ctx: CallContext, offset: bigint): Promise<bigint> {
    const limits = this.call.request.limits;
    const request = ctx.read(offset);
    if (request === null) throw new GuestAbort('S-TOOL-BAD-POINTER', `${EXTISM_CAPABILITY_CALL}(${offset}) names no Extism memory block.`, { import: EXTISM_CAPABILITY_CALL, offset: offset.toString() });
    const answer = await this.call.broker(request.bytes().slice());
    // After a deadline the worker is gone: returning would leave Extism waiting for it.
    if (this.stopped) throw new GuestAbort('R-TIMEOUT-001', 'The call ended while the broker worked.');
    if (answer.kind === 'abort') throw new GuestAbort(answer.code, answer.message, answer.details);
    this.#capabilityFuel += answer.fuel;
    if (this.#capabilityFuel > limits.fuel) {
      throw new GuestAbort('S-TOOL-FUEL-EXHAUSTED', `The tool used up its fuel budget of ${limits.fuel}.`, { fuel_limit: limits.fuel, fuel_used: this.#capabilityFuel, phase: 'capability' });
    }
    try {
      return ctx.store(answer.response);
    } catch (err) {
      throw new GuestAbort('S-TOOL-TRAP', `The answer does not fit in the plugin's Extism memory (capped at ${limits.maxMemoryPages} pages): ${(err as Error).message}`, { max_memory_pages: limits.maxMemoryPages, answer_bytes: answer.response.length });
    }
  }

  /** Runs the entry on `plugin`, reads the shim's report, and classifies how the call ended. */
  async runOn(plugin: Plugin): Promise<ExecuteResult> {
    const { module, input, limits } = this.call.request;
    this.plugin = plugin;
    if (this.stopped) return fault('R-TIMEOUT-001', 'The call ended while the plugin started.', {});
    let output: Uint8Array | null = null;
    let failure: unknown;
    const called = await Promise.race([plugin.call(module.entrypoint, input).then((o) => ({ o }), (e: unknown) => ({ e })), this.whenStopped]);
    if (called === STOPPED) return fault('R-TIMEOUT-001', 'The call was stopped.', {});
    if ('e' in called) failure = called.e;
    else output = called.o?.bytes().slice() ?? null;
    let report: ShimReport | null = null;
    if (this.decision === undefined && !this.stopped) {
      try {
        const reported = await Promise.race([plugin.call(REPORT_EXPORT), this.whenStopped]);
        report = reported === STOPPED || reported === null ? null : decodeReport(reported.bytes());
      } catch {
        report = null;
      }
    }
    const exportName = (index: number) => module.instrumented.info.exports.find((e) => e.kind === 'func' && e.index === index)?.name;
    return classify({ output, failure, decision: this.decision, report, capabilityFuel: this.#capabilityFuel, limits, entrypoint: module.entrypoint, exportName });
  }
}
