// The per-call sandbox inside a worker: instantiate (or recycle) an instance, meter it with
// fuel, pass JSON in through alloc/execute, read the packed result with bounds checks, and
// classify every way a guest can fail. No guest state survives from one call to the next. The
// first decision the host makes to end a call is its outcome, whatever the guest does after it
// (capability-import.ts; ABI-FINAL-001 to ABI-FINAL-005).
import { createHash } from 'node:crypto';
import { GuestOutputSchema, PANIC_EXPORT, PANIC_MESSAGE_MAX_BYTES, scanJsonText, type ErrorCode } from '../../../abi/index.js';
import { jsonRefusal } from '../../1-base/json-entry.js';
import { FUEL_EXPORT, START_EXPORT } from '../wasm/index.js';
import { GuestLink, type BrokerLink, type Phase } from './capability-import.js';
import { GuestAbort, isGuestException, UNCAUGHT_EXCEPTION, uncaughtMessage } from './decision.js';
import { inBounds, pagesOf, readBytes, unpackPtrLen, writeBytes } from './guest-memory.js';
import { KeptInstances, restore, takeSnapshot, type Snapshot } from './instance-snapshot.js';
import type { ExecuteFault, ExecuteOutput, ExecuteResult, RunnableTask } from './protocol.js';
import { authorFunction, exportNamesOf, panicLocation, siteDetails, siteText, trapSite } from './trap-site.js';
import { utf8Prefix, wellFormed } from './report-text.js';

export type { BrokerLink } from './capability-import.js';

type Unmeasured = Omit<ExecuteOutput, 'recycled'> | Omit<ExecuteFault, 'recycled'>;

interface Slot {
  readonly instance: WebAssembly.Instance;
  readonly memory: WebAssembly.Memory;
  readonly fuel: WebAssembly.Global;
  readonly link: GuestLink;
  startFuel: number;
  readonly globalExports: readonly string[];
  snapshot?: Snapshot;
  dirty: boolean;
}

type Fn = (...args: number[]) => unknown;

const decoder = new TextDecoder('utf-8', { fatal: true });
const lenientDecoder = new TextDecoder('utf-8');
/** Fuel granted to `helix_panic` after a trap: enough to find a message, not to run away. */
const PANIC_FUEL = 1_000_000n;

/** A sandbox holds at most one recyclable instance per module, whatever the memory caps it ran under. */
export class Sandbox {
  readonly #slots = new KeptInstances<Slot>();

  /** `broker` answers the guests' capability calls (in a worker: through the lane). */
  constructor(private readonly broker: BrokerLink) {}

  /** Runs one call. Never throws for anything the guest does. */
  run(task: RunnableTask): ExecuteResult {
    const budget = BigInt(task.fuel);
    let slot = this.#slots.take(task.key);
    let recycled = false;
    try {
      if (slot !== undefined && slot.startFuel <= task.fuel && restore(slot)) {
        recycled = true;
        slot.link.begin();
        slot.fuel.value = budget - BigInt(slot.startFuel);
      } else {
        slot = undefined;
        const created = instantiate(task, budget, this.broker);
        if ('kind' in created) return created;
        slot = created;
      }
      const result = call(slot, task);
      if (result.kind === 'output' && task.recyclable) {
        slot.dirty = true;
        this.#slots.keep(task.key, slot);
      }
      return { ...result, recycled };
    } catch (err) {
      return classify(err, slot, task, budget, recycled);
    }
  }

  /** Drops the instance kept under `key`, if any: the engine gave its module up (ABI-ALLOC-010). */
  forget(key: string): void {
    this.#slots.forget(key);
  }

  /** Keys of the instances kept for recycling (for a worker's census). */
  kept(): string[] {
    return this.#slots.keys();
  }
}

function instantiate(task: RunnableTask, budget: bigint, broker: BrokerLink): Slot | ExecuteFault {
  const link = new GuestLink(broker);
  let instance: WebAssembly.Instance;
  try {
    instance = new WebAssembly.Instance(task.module, link.imports());
  } catch (err) {
    return fault(
      'S-TOOL-INSTANTIATE',
      `The module could not be instantiated: ${(err as Error).message}`,
      { error: (err as Error).message },
      0,
      0,
    );
  }
  const exports = instance.exports;
  const memory = exports.memory as WebAssembly.Memory;
  const fuel = exports[FUEL_EXPORT] as WebAssembly.Global;
  link.bind(memory, exports.alloc as Fn, fuel);
  fuel.value = budget;
  const slot: Slot = { instance, memory, fuel, link, startFuel: 0, globalExports: task.globalExports, dirty: false };
  if (task.hasStart) {
    link.phase = 'start';
    try {
      (exports[START_EXPORT] as Fn)();
      link.settle(); // a decision the start function caught stands
    } catch (err) {
      return classify(err, slot, task, budget, false);
    }
  }
  const remaining = fuel.value as bigint;
  if (remaining < 0n) return classify(new FuelExhausted(), slot, task, budget, false);
  slot.startFuel = Number(budget - remaining);
  if (task.recyclable) {
    slot.snapshot = takeSnapshot(instance, memory, task.globalExports);
  }
  return slot;
}

function call(slot: Slot, task: RunnableTask): Unmeasured {
  const exports = slot.instance.exports;
  const { memory, link } = slot;
  const alloc = exports.alloc as Fn;
  const dealloc = exports.dealloc as Fn;
  const execute = exports[task.entrypoint] as (ptr: number, len: number) => bigint;
  const input = task.input;
  // After each guest function the host calls, a decision made while it ran (and caught by the
  // guest) stands: the host goes no further with the call.
  link.phase = 'alloc';
  const inPtr = (alloc(input.length) as number) >>> 0;
  link.settle();
  if (!inBounds(memory, inPtr, input.length)) {
    throw new GuestAbort('S-TOOL-BAD-POINTER', `alloc(${input.length}) returned ${inPtr}, outside the guest's memory.`, {
      export: 'alloc',
      ptr: inPtr,
      len: input.length,
      memory_bytes: memory.buffer.byteLength,
    });
  }
  writeBytes(memory, inPtr, input);
  link.phase = 'execute';
  const packed = execute(inPtr, input.length);
  link.settle();
  const { ptr, len } = unpackPtrLen(packed);
  if (!inBounds(memory, ptr, len)) {
    throw new GuestAbort(
      'S-TOOL-BAD-POINTER',
      `${task.entrypoint} returned ptr ${ptr} len ${len}, outside the guest's memory of ${memory.buffer.byteLength} bytes.`,
      { export: task.entrypoint, ptr, len, memory_bytes: memory.buffer.byteLength },
    );
  }
  if (len > task.maxOutputBytes) {
    throw new GuestAbort('S-TOOL-OUTPUT-TOO-LARGE', `The output is ${len} bytes, above the limit of ${task.maxOutputBytes}.`, {
      output_bytes: len,
      max_output_bytes: task.maxOutputBytes,
    });
  }
  const bytes = readBytes(memory, ptr, len);
  link.phase = 'dealloc';
  dealloc(ptr, len);
  dealloc(inPtr, input.length);
  link.settle();
  const remaining = slot.fuel.value as bigint;
  if (remaining < 0n) throw new FuelExhausted();
  const measures = { fuelUsed: task.fuel - Number(remaining), memoryPages: pagesOf(memory) };
  const parsed = parseOutput(bytes);
  if (parsed.kind === 'fault') return { ...parsed, ...measures };
  return { kind: 'output', output: parsed.output, outputSha256: createHash('sha256').update(bytes).digest('hex'), ...measures };
}

function parseOutput(
  bytes: Uint8Array,
):
  | { kind: 'output'; output: import('../../../abi/index.js').GuestOutput }
  | { kind: 'fault'; code: ErrorCode; message: string; details: Record<string, unknown> } {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return {
      kind: 'fault',
      code: 'S-TOOL-OUTPUT-ENCODING',
      message: 'The output is not valid UTF-8.',
      details: { output_bytes: bytes.length },
    };
  }
  // Bounded before JSON.parse, and so before anything recursive (zod, structured clone of the
  // reply, the run record) sees the value (ABI-JSON-001 to -004).
  const violation = scanJsonText(text, { envelope: true });
  if (violation !== undefined) return { kind: 'fault', ...jsonRefusal(violation, 'output', 'the output') };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return {
      kind: 'fault',
      code: 'S-TOOL-OUTPUT-JSON',
      message: `The output is not JSON: ${wellFormed((err as Error).message)}`,
      details: { preview: utf8Prefix(text, 200) },
    };
  }
  const envelope = GuestOutputSchema.safeParse(json);
  if (!envelope.success) {
    const violations = envelope.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return {
      kind: 'fault',
      code: 'S-TOOL-OUTPUT-ENVELOPE',
      message: `The output is not a valid envelope: ${violations.join('; ')}`,
      details: { violations, preview: utf8Prefix(text, 200) },
    };
  }
  return { kind: 'output', output: envelope.data };
}

class FuelExhausted extends Error {}

function fault(code: ErrorCode, message: string, details: Record<string, unknown>, fuelUsed: number, memoryPages: number): ExecuteFault {
  return { kind: 'fault', code, message, details, fuelUsed, memoryPages, recycled: false };
}

/**
 * Maps how a call ended onto the taxonomy. A decision the host made while the guest ran wins over
 * whatever the guest did after it (ABI-FINAL-001), with the fuel and memory of that moment.
 */
function classify(thrown: unknown, slot: Slot | undefined, task: RunnableTask, budget: bigint, recycled: boolean): ExecuteFault {
  const decision = slot?.link.decision;
  const err = decision === undefined ? thrown : decision.error;
  const phase: Phase = decision?.phase ?? slot?.link.phase ?? 'instantiate';
  const remaining = decision?.remaining ?? (slot === undefined ? 0n : (slot.fuel.value as bigint));
  const fuelUsed = slot === undefined ? 0 : Number(budget - remaining);
  const pages = decision?.memoryPages ?? (slot === undefined ? 0 : pagesOf(slot.memory));
  const base = { fuelUsed, memoryPages: pages, recycled };
  if (err instanceof GuestAbort) return { kind: 'fault', code: err.code, message: err.message, details: err.details, ...base };
  if (err instanceof FuelExhausted || (slot !== undefined && remaining < 0n)) {
    return {
      kind: 'fault',
      code: 'S-TOOL-FUEL-EXHAUSTED',
      message: `The tool used up its fuel budget of ${task.fuel}.`,
      details: { fuel_limit: task.fuel, fuel_used: fuelUsed, phase },
      ...base,
    };
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return { kind: 'fault', code: 'S-TOOL-STACK-OVERFLOW', message: 'The tool exhausted its call stack.', details: { phase }, ...base };
  }
  if (err instanceof WebAssembly.RuntimeError || isGuestException(err)) {
    // A guest's own exception that nothing caught is its fault, as a trap is (ABI-FINAL-005).
    const uncaught = isGuestException(err);
    const details: Record<string, unknown> = {
      trap: uncaught ? UNCAUGHT_EXCEPTION : err.message,
      phase,
      memory_pages: pages,
      max_memory_pages: task.maxMemoryPages,
    };
    if (uncaught) details.uncaught_exception = true;
    // The guest function the host was running, and where in the module the trap struck.
    const called = phase === 'execute' ? task.entrypoint : phase === 'start' ? 'the start function' : phase;
    if (phase !== 'instantiate') details.export = called;
    const site = uncaught
      ? undefined
      : trapSite((err as Error).stack, slot === undefined ? undefined : exportNamesOf(slot.instance.exports));
    Object.assign(details, siteDetails(site));
    // After a host decision no guest function runs again, helix_panic included.
    const panic = slot === undefined || decision !== undefined ? undefined : panicMessage(slot);
    if (panic !== undefined) details.panic = panic;
    // The author's file and line, as the SDK's abort handler or HELIX_ASSERT recorded them.
    const source = panic === undefined ? undefined : panicLocation(panic);
    if (source !== undefined) details.source = source;
    // A check inside AssemblyScript's standard library names the library's line: the author's
    // function under it says where the bad index or cast came from.
    const caller = source?.file.startsWith('~lib/') ? authorFunction(site) : undefined;
    if (caller !== undefined) details.called_from = caller;
    const atCap =
      pages >= task.maxMemoryPages
        ? ` Memory is at its cap of ${task.maxMemoryPages} pages, so a failed allocation is the likely cause.`
        : '';
    const what = uncaught ? uncaughtMessage(phase) : `The tool trapped${phase === 'instantiate' ? '' : ` in ${called}`}: ${err.message}`;
    const where =
      panic !== undefined
        ? ` (${panic}${caller === undefined ? '' : `, called from ${caller}`})`
        : site !== undefined
          ? `, at ${siteText(site)}`
          : '';
    return { kind: 'fault', code: 'S-TOOL-TRAP', message: `${what}${where}.${atCap}`, details, ...base };
  }
  throw err; // a host bug, not a guest fault: let the engine report it
}

function panicMessage(slot: Slot): string | undefined {
  const fn = slot.instance.exports[PANIC_EXPORT] as (() => bigint) | undefined;
  if (typeof fn !== 'function') return undefined;
  try {
    slot.link.phase = 'panic';
    slot.fuel.value = PANIC_FUEL;
    const { ptr, len } = unpackPtrLen(fn());
    if (len === 0 || !inBounds(slot.memory, ptr, len)) return undefined;
    return lenientDecoder.decode(readBytes(slot.memory, ptr, Math.min(len, PANIC_MESSAGE_MAX_BYTES)));
  } catch {
    return undefined;
  }
}
