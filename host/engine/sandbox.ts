// The per-call sandbox inside a worker: instantiate (or recycle) an instance, meter it with
// fuel, pass JSON in through alloc/execute, read the packed result with bounds checks, and
// classify every way a guest can fail. No guest state survives from one call to the next.
import { createHash } from 'node:crypto';
import {
  GuestOutputSchema,
  HOST_IMPORT_CAPABILITY_CALL,
  HOST_IMPORT_MODULE,
  PANIC_EXPORT,
  PANIC_MESSAGE_MAX_BYTES,
  scanJsonText,
  type ErrorCode,
} from '../../abi/index.js';
import { jsonRefusal } from '../json-entry.js';
import { FUEL_EXPORT, START_EXPORT } from '../wasm/index.js';
import { inBounds, packPtrLen, pagesOf, readBytes, unpackPtrLen, writeBytes } from './guest-memory.js';
import type { BrokerAnswer, ExecuteFault, ExecuteOutput, ExecuteResult, RunnableTask } from './protocol.js';

type Unmeasured = Omit<ExecuteOutput, 'recycled'> | Omit<ExecuteFault, 'recycled'>;

/** Thrown from a host function to end the run with a classified fault. */
class GuestAbort extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Per-call state the host functions reach through (the wasmtime `Caller` idea). */
interface CallState {
  task: RunnableTask;
}

/** Sends a capability request to the broker and waits for its answer (synchronously). */
export type BrokerLink = (request: Uint8Array) => BrokerAnswer;

interface Holder {
  current: CallState | undefined;
  memory?: WebAssembly.Memory;
  alloc?: Fn;
  fuel?: WebAssembly.Global;
  broker: BrokerLink;
}

interface Slot {
  readonly instance: WebAssembly.Instance;
  readonly memory: WebAssembly.Memory;
  readonly fuel: WebAssembly.Global;
  readonly state: Holder;
  startFuel: number;
  readonly globalExports: readonly string[];
  snapshot?: { memory: Uint8Array; globals: unknown[] };
  dirty: boolean;
}

type Fn = (...args: number[]) => unknown;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const lenientDecoder = new TextDecoder('utf-8');
/** Fuel granted to `helix_panic` after a trap: enough to find a message, not to run away. */
const PANIC_FUEL = 1_000_000n;

/** A sandbox holds at most one recyclable instance per compiled module. */
export class Sandbox {
  readonly #slots = new Map<string, Slot>();

  /** `broker` answers the guests' capability calls (in a worker: through the lane). */
  constructor(private readonly broker: BrokerLink) {}

  /** Runs one call. Never throws for anything the guest does. */
  run(task: RunnableTask): ExecuteResult {
    const budget = BigInt(task.fuel);
    const state: CallState = { task };
    let slot = this.#slots.get(task.key);
    this.#slots.delete(task.key); // a slot is reinstated only after a clean call
    let recycled = false;
    const progress = { phase: 'instantiate' };
    try {
      if (slot !== undefined && slot.startFuel <= task.fuel && restore(slot)) {
        recycled = true;
        slot.state.current = state;
        slot.fuel.value = budget - BigInt(slot.startFuel);
      } else {
        slot = undefined;
        const created = instantiate(task, budget, this.broker);
        if ('kind' in created) return created;
        slot = created;
        slot.state.current = state;
      }
      const result = call(slot, task, progress);
      if (result.kind === 'output' && task.recyclable) {
        slot.dirty = true;
        this.#slots.set(task.key, slot);
      }
      return { ...result, recycled };
    } catch (err) {
      return classify(err, slot, task, budget, progress.phase, recycled);
    } finally {
      if (slot !== undefined) slot.state.current = undefined;
    }
  }
}

function instantiate(task: RunnableTask, budget: bigint, broker: BrokerLink): Slot | ExecuteFault {
  // No call state while the start function runs: capability calls are refused there, since a
  // recycled instance would not repeat them.
  const holder: Holder = { current: undefined, broker };
  const imports = { [HOST_IMPORT_MODULE]: { [HOST_IMPORT_CAPABILITY_CALL]: (ptr: number, len: number) => capabilityCall(holder, ptr >>> 0, len >>> 0) } };
  let instance: WebAssembly.Instance;
  try {
    instance = new WebAssembly.Instance(task.module, imports);
  } catch (err) {
    return fault('S-TOOL-INSTANTIATE', `The module could not be instantiated: ${(err as Error).message}`, { error: (err as Error).message }, 0, 0);
  }
  const exports = instance.exports;
  const memory = exports.memory as WebAssembly.Memory;
  const fuel = exports[FUEL_EXPORT] as WebAssembly.Global;
  holder.memory = memory;
  holder.alloc = exports.alloc as Fn;
  holder.fuel = fuel;
  fuel.value = budget;
  const slot: Slot = { instance, memory, fuel, state: holder, startFuel: 0, globalExports: task.globalExports, dirty: false };
  if (task.hasStart) {
    try {
      (exports[START_EXPORT] as Fn)();
    } catch (err) {
      return classify(err, slot, task, budget, 'start', false);
    }
  }
  const remaining = fuel.value as bigint;
  if (remaining < 0n) return classify(new FuelExhausted(), slot, task, budget, 'start', false);
  slot.startFuel = Number(budget - remaining);
  if (task.recyclable) {
    slot.snapshot = { memory: new Uint8Array(memory.buffer).slice(), globals: task.globalExports.map((g) => (exports[g] as WebAssembly.Global).value) };
  }
  return slot;
}

/** Puts a used instance back in its post-start state; false when that is impossible. */
function restore(slot: Slot): boolean {
  const snap = slot.snapshot;
  if (snap === undefined) return false;
  if (!slot.dirty) return true;
  // Memory cannot shrink: a call that grew it leaves an instance no snapshot can restore.
  if (slot.memory.buffer.byteLength !== snap.memory.length) return false;
  new Uint8Array(slot.memory.buffer).set(snap.memory);
  const exports = slot.instance.exports;
  slot.globalExports.forEach((name, i) => {
    (exports[name] as WebAssembly.Global).value = snap.globals[i];
  });
  slot.dirty = false;
  return true;
}

function call(slot: Slot, task: RunnableTask, progress: { phase: string }): Unmeasured {
  const exports = slot.instance.exports;
  const { memory } = slot;
  const alloc = exports.alloc as Fn;
  const dealloc = exports.dealloc as Fn;
  const execute = exports[task.entrypoint] as (ptr: number, len: number) => bigint;
  const input = task.input;
  progress.phase = 'alloc';
  const inPtr = (alloc(input.length) as number) >>> 0;
  if (!inBounds(memory, inPtr, input.length)) {
    throw new GuestAbort('S-TOOL-BAD-POINTER', `alloc(${input.length}) returned ${inPtr}, outside the guest's memory.`, { export: 'alloc', ptr: inPtr, len: input.length, memory_bytes: memory.buffer.byteLength });
  }
  writeBytes(memory, inPtr, input);
  progress.phase = 'execute';
  const { ptr, len } = unpackPtrLen(execute(inPtr, input.length));
  if (!inBounds(memory, ptr, len)) {
    throw new GuestAbort('S-TOOL-BAD-POINTER', `${task.entrypoint} returned ptr ${ptr} len ${len}, outside the guest's memory of ${memory.buffer.byteLength} bytes.`, { export: task.entrypoint, ptr, len, memory_bytes: memory.buffer.byteLength });
  }
  if (len > task.maxOutputBytes) {
    throw new GuestAbort('S-TOOL-OUTPUT-TOO-LARGE', `The output is ${len} bytes, above the limit of ${task.maxOutputBytes}.`, { output_bytes: len, max_output_bytes: task.maxOutputBytes });
  }
  const bytes = readBytes(memory, ptr, len);
  progress.phase = 'dealloc';
  dealloc(ptr, len);
  dealloc(inPtr, input.length);
  const remaining = slot.fuel.value as bigint;
  if (remaining < 0n) throw new FuelExhausted();
  const measures = { fuelUsed: task.fuel - Number(remaining), memoryPages: pagesOf(memory) };
  const parsed = parseOutput(bytes);
  if (parsed.kind === 'fault') return { ...parsed, ...measures };
  return { kind: 'output', output: parsed.output, outputSha256: createHash('sha256').update(bytes).digest('hex'), ...measures };
}

function parseOutput(bytes: Uint8Array): { kind: 'output'; output: import('../../abi/index.js').GuestOutput } | { kind: 'fault'; code: ErrorCode; message: string; details: Record<string, unknown> } {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { kind: 'fault', code: 'S-TOOL-OUTPUT-ENCODING', message: 'The output is not valid UTF-8.', details: { output_bytes: bytes.length } };
  }
  // Bounded before JSON.parse, and so before anything recursive (zod, structured clone of the
  // reply, the run record) sees the value (ABI-JSON-001 to -004).
  const violation = scanJsonText(text, { envelope: true });
  if (violation !== undefined) return { kind: 'fault', ...jsonRefusal(violation, 'output', 'the output') };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { kind: 'fault', code: 'S-TOOL-OUTPUT-JSON', message: `The output is not JSON: ${(err as Error).message}`, details: { preview: text.slice(0, 200) } };
  }
  const envelope = GuestOutputSchema.safeParse(json);
  if (!envelope.success) {
    const violations = envelope.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { kind: 'fault', code: 'S-TOOL-OUTPUT-ENVELOPE', message: `The output is not a valid envelope: ${violations.join('; ')}`, details: { violations, preview: text.slice(0, 200) } };
  }
  return { kind: 'output', output: envelope.data };
}

/**
 * `helix_v1.capability_call`: the request is read with bounds checks and handed to the broker;
 * the guest blocks until the answer is written into a buffer from its own `alloc`.
 */
function capabilityCall(holder: Holder, ptr: number, len: number): bigint {
  const { current: state, memory, alloc, fuel } = holder;
  // During instantiation (a start function) there is no call yet: a recycled instance would
  // not repeat the call, so a start function may make none.
  if (state === undefined || memory === undefined || alloc === undefined || fuel === undefined) {
    throw new GuestAbort('S-TOOL-TRAP', 'capability_call is not available while the module starts.', { phase: 'start' });
  }
  if (!inBounds(memory, ptr, len)) {
    throw new GuestAbort('S-TOOL-BAD-POINTER', `capability_call(${ptr}, ${len}) points outside the guest's memory.`, { import: HOST_IMPORT_CAPABILITY_CALL, ptr, len, memory_bytes: memory.buffer.byteLength });
  }
  const answer = holder.broker(readBytes(memory, ptr, len));
  if (answer.kind === 'abort') throw new GuestAbort(answer.code, answer.message, answer.details);
  // The call's cost in fuel; the guest's next check sees it (the counter is reloaded after calls).
  fuel.value = (fuel.value as bigint) - BigInt(answer.fuel);
  const response = answer.response;
  const outPtr = (alloc(response.length) as number) >>> 0;
  if (!inBounds(memory, outPtr, response.length)) {
    throw new GuestAbort('S-TOOL-BAD-POINTER', `alloc(${response.length}) returned ${outPtr}, outside the guest's memory.`, { export: 'alloc', ptr: outPtr, len: response.length });
  }
  writeBytes(memory, outPtr, response);
  return packPtrLen(outPtr, response.length);
}

class FuelExhausted extends Error {}

function fault(code: ErrorCode, message: string, details: Record<string, unknown>, fuelUsed: number, memoryPages: number): ExecuteFault {
  return { kind: 'fault', code, message, details, fuelUsed, memoryPages, recycled: false };
}

function classify(err: unknown, slot: Slot | undefined, task: RunnableTask, budget: bigint, phase: string, recycled: boolean): ExecuteFault {
  const remaining = slot === undefined ? 0n : (slot.fuel.value as bigint);
  const fuelUsed = slot === undefined ? 0 : Number(budget - remaining);
  const pages = slot === undefined ? 0 : pagesOf(slot.memory);
  const base = { fuelUsed, memoryPages: pages, recycled };
  if (err instanceof GuestAbort) return { kind: 'fault', code: err.code, message: err.message, details: err.details, ...base };
  if (err instanceof FuelExhausted || (slot !== undefined && remaining < 0n)) {
    return { kind: 'fault', code: 'S-TOOL-FUEL-EXHAUSTED', message: `The tool used up its fuel budget of ${task.fuel}.`, details: { fuel_limit: task.fuel, fuel_used: fuelUsed, phase }, ...base };
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return { kind: 'fault', code: 'S-TOOL-STACK-OVERFLOW', message: 'The tool exhausted its call stack.', details: { phase }, ...base };
  }
  if (err instanceof WebAssembly.RuntimeError) {
    const details: Record<string, unknown> = { trap: err.message, phase, memory_pages: pages, max_memory_pages: task.maxMemoryPages };
    const panic = slot === undefined ? undefined : panicMessage(slot);
    if (panic !== undefined) details.panic = panic;
    const atCap = pages >= task.maxMemoryPages ? ` Memory is at its cap of ${task.maxMemoryPages} pages, so a failed allocation is the likely cause.` : '';
    return { kind: 'fault', code: 'S-TOOL-TRAP', message: `The tool trapped: ${err.message}${panic === undefined ? '' : ` (${panic})`}.${atCap}`, details, ...base };
  }
  throw err; // a host bug, not a guest fault: let the engine report it
}

function panicMessage(slot: Slot): string | undefined {
  const fn = slot.instance.exports[PANIC_EXPORT] as (() => bigint) | undefined;
  if (typeof fn !== 'function') return undefined;
  try {
    slot.fuel.value = PANIC_FUEL;
    const { ptr, len } = unpackPtrLen(fn());
    if (len === 0 || !inBounds(slot.memory, ptr, len)) return undefined;
    return lenientDecoder.decode(readBytes(slot.memory, ptr, Math.min(len, PANIC_MESSAGE_MAX_BYTES)));
  } catch {
    return undefined;
  }
}
