// The per-call sandbox of an extism/v1 plugin inside a lane's worker: the instrumented plugin runs
// with the engine's own Extism kernel (extism-kernel.ts) and `helix_capability_call`, which
// reaches the broker through the lane as helix/v1's capability_call does. Fresh state per call
// (ABI-EXTISM-006): the kernel starts empty each call, and the instance is new or restored from
// its post-start snapshot, kept only when the start function touched no host function, so the
// snapshot cannot depend on a call's input. How the call ended is classified by extism-outcome.ts.
import { EXTISM_CAPABILITY_CALL, EXTISM_ENV_MODULE, EXTISM_USER_MODULE } from '../../../abi/index.js';
import { FUEL_EXPORT, START_EXPORT } from '../wasm/index.js';
import type { BrokerLink } from './capability-import.js';
import { GuestAbort } from './decision.js';
import { ExtismKernel } from './extism-kernel.js';
import { classify, type Report } from './extism-outcome.js';
import { pagesOf } from './guest-memory.js';
import { KeptInstances, restore, takeSnapshot, type Snapshot } from './instance-snapshot.js';
import type { ExecuteResult, RunnableTask } from './protocol.js';
import { exportNamesOf } from './trap-site.js';

/** The counter after a decision: so far below zero that the plugin's next check traps. */
const SPENT = -(1n << 62n);

/** One instance of a plugin with its kernel and its link to the broker. */
interface Slot {
  readonly instance: WebAssembly.Instance;
  readonly memory: WebAssembly.Memory;
  readonly fuel: WebAssembly.Global;
  readonly kernel: ExtismKernel;
  readonly link: ExtismLink;
  readonly globalExports: readonly string[];
  startFuel: number;
  snapshot?: Snapshot;
  dirty: boolean;
}

/**
 * `helix_capability_call` of one instance and the call's first decision. Whatever it throws is
 * the decision (ABI-FINAL-006): every later capability call gets it again without reaching the
 * broker, and the fuel counter is spent so the plugin's next check traps, which no handler of
 * the plugin can catch; the decision stands even if the plugin caught the throw.
 */
class ExtismLink {
  decision: { readonly error: GuestAbort; readonly remaining: bigint; readonly memoryPages: number } | undefined;
  /** Set while the start function runs; `touched` tells whether it called a host function. */
  starting = false;
  touched = false;
  fuel: WebAssembly.Global | undefined;
  memory: WebAssembly.Memory | undefined;

  constructor(
    private readonly broker: BrokerLink,
    private readonly kernel: ExtismKernel,
  ) {}

  begin(): void {
    this.decision = undefined;
  }

  readonly capabilityCall = (offset: bigint): bigint => {
    if (this.starting) this.touched = true;
    if (this.decision !== undefined) throw this.decision.error;
    try {
      return this.#serve(offset);
    } catch (err) {
      const error =
        err instanceof GuestAbort
          ? err
          : new GuestAbort('S-TOOL-WORKER-LOST', `The capability broker failed: ${err instanceof Error ? err.message : String(err)}`);
      const fuel = this.fuel!;
      this.decision = { error, remaining: fuel.value as bigint, memoryPages: pagesOf(this.memory!) };
      fuel.value = SPENT;
      throw error;
    }
  };

  #serve(offset: bigint): bigint {
    const request = this.kernel.read(offset);
    if (request === null)
      throw new GuestAbort('S-TOOL-BAD-POINTER', `${EXTISM_CAPABILITY_CALL}(${offset}) names no Extism memory block.`, {
        import: EXTISM_CAPABILITY_CALL,
        offset: offset.toString(),
      });
    const answer = this.broker(request.slice());
    if (answer.kind === 'abort') throw new GuestAbort(answer.code, answer.message, answer.details);
    // The call's cost in fuel; the plugin's next check sees it (ABI-EXTISM-009).
    const fuel = this.fuel!;
    fuel.value = (fuel.value as bigint) - BigInt(answer.fuel);
    const addr = this.kernel.store(answer.response);
    if (addr === 0n) {
      const pages = (this.kernel.maxBytes / 65_536) | 0;
      throw new GuestAbort('S-TOOL-TRAP', `The answer does not fit in the plugin's Extism memory (capped at ${pages} pages).`, {
        max_memory_pages: pages,
        answer_bytes: answer.response.length,
      });
    }
    return addr;
  }
}

/** Runs extism/v1 calls; keeps at most one recyclable instance per plugin (ABI-ALLOC-008). */
export class ExtismSandbox {
  readonly #slots = new KeptInstances<Slot>();

  constructor(private readonly broker: BrokerLink) {}

  /** Runs one call. Never throws for anything the plugin does. */
  run(task: RunnableTask): ExecuteResult {
    // The input is a block of kernel memory, capped like linear memory (ABI-EXTISM-009): an input
    // that cannot be placed ends the call before any plugin code runs, as an answer that does not fit does.
    const misfit = inputMisfit(task);
    if (misfit !== undefined) return misfit;
    const budget = BigInt(task.fuel);
    let slot = this.#slots.take(task.key);
    let recycled = false;
    if (slot !== undefined && slot.startFuel <= task.fuel && restore(slot)) {
      recycled = true;
      slot.kernel.begin(task.input, task.maxMemoryPages);
      slot.link.begin();
      slot.fuel.value = budget - BigInt(slot.startFuel);
    } else {
      const made = instantiate(task, this.broker);
      if ('kind' in made) return made;
      slot = made;
    }
    const { instance, memory, fuel, kernel, link } = slot;
    let failure: unknown;
    let returnCode: number | null = null;
    // A fresh instance runs its start function here, inside the call and metered (ABI-EXTISM-005).
    if (!recycled && task.hasStart) {
      link.starting = true;
      try {
        (instance.exports[START_EXPORT] as () => void)();
      } catch (err) {
        failure = err;
      }
      link.starting = false;
      slot.startFuel = Number(budget - (fuel.value as bigint));
    }
    if (
      failure === undefined &&
      link.decision === undefined &&
      !recycled &&
      task.recyclable &&
      !link.touched &&
      (fuel.value as bigint) >= 0n
    ) {
      slot.snapshot = takeSnapshot(instance, memory, slot.globalExports);
    }
    if (failure === undefined && link.decision === undefined) {
      try {
        returnCode = (instance.exports[task.entrypoint] as () => number)();
      } catch (err) {
        failure = err;
      }
    }
    const decision = link.decision;
    const { output, error } = kernel.end();
    const report: Report = {
      remaining: decision?.remaining ?? (fuel.value as bigint),
      returnCode,
      memoryPages: decision?.memoryPages ?? pagesOf(memory),
    };
    const limits = { fuel: task.fuel, maxMemoryPages: task.maxMemoryPages, maxOutputBytes: task.maxOutputBytes };
    const result = classify({
      output,
      pluginError: error,
      failure,
      decision: decision?.error,
      report,
      limits,
      entrypoint: task.entrypoint,
      exportName: exportNamesOf(instance.exports),
    });
    if (result.kind === 'output' && slot.snapshot !== undefined) {
      slot.dirty = true;
      this.#slots.keep(task.key, slot);
    }
    return { ...result, recycled };
  }

  /** Drops the instance kept under `key`: the engine gave its variant up (ABI-ALLOC-010). */
  forget(key: string): void {
    this.#slots.forget(key);
  }

  /** Keys of the instances kept for recycling. */
  kept(): string[] {
    return this.#slots.keys();
  }
}

/** The fault of a call whose input does not fit in the kernel memory of its cap (block 0 holds a byte). */
function inputMisfit(task: RunnableTask): ExecuteResult | undefined {
  if (1 + task.input.length <= task.maxMemoryPages * 65_536) return undefined;
  const pages = task.maxMemoryPages;
  return {
    kind: 'fault',
    code: 'S-TOOL-TRAP',
    message: `The input (${task.input.length} bytes) does not fit in the plugin's Extism memory (capped at ${pages} pages).`,
    details: { phase: 'execute', max_memory_pages: pages, input_bytes: task.input.length },
    fuelUsed: 0,
    memoryPages: 0,
    recycled: false,
  };
}

/** A new instance with its kernel begun for the call; its start function has not run yet. */
function instantiate(task: RunnableTask, broker: BrokerLink): Slot | ExecuteResult {
  const kernel = new ExtismKernel();
  const link = new ExtismLink(broker, kernel);
  // A plugin with a start function sees the kernel through a watch, so that a start function
  // that touches it (and whose state could so depend on the input) is never snapshotted.
  const env = task.hasStart ? watched(kernel.env, link) : kernel.env;
  let instance: WebAssembly.Instance;
  try {
    instance = new WebAssembly.Instance(task.module, {
      [EXTISM_ENV_MODULE]: env,
      [EXTISM_USER_MODULE]: { [EXTISM_CAPABILITY_CALL]: link.capabilityCall },
    });
  } catch (err) {
    return {
      kind: 'fault',
      code: 'S-TOOL-INSTANTIATE',
      message: `The plugin could not be instantiated: ${(err as Error).message}`,
      details: { error: (err as Error).message },
      fuelUsed: 0,
      memoryPages: 0,
      recycled: false,
    };
  }
  const memory = instance.exports.memory as WebAssembly.Memory;
  const fuel = instance.exports[FUEL_EXPORT] as WebAssembly.Global;
  link.fuel = fuel;
  link.memory = memory;
  kernel.begin(task.input, task.maxMemoryPages);
  fuel.value = BigInt(task.fuel);
  return { instance, memory, fuel, kernel, link, globalExports: task.globalExports, startFuel: 0, dirty: false };
}

/** The kernel's functions, each noting on `link` when it is called while the start function runs. */
function watched(env: ExtismKernel['env'], link: ExtismLink): WebAssembly.ModuleImports {
  const out: Record<string, (a: never, b: never) => unknown> = {};
  // Two parameters, the most a kernel function takes: no rest parameters on the call path.
  for (const [name, fn] of Object.entries(env) as Array<[string, (a: never, b: never) => unknown]>) {
    out[name] = (a, b) => {
      if (link.starting) link.touched = true;
      return fn(a, b);
    };
  }
  return out;
}
