// `helix_v1.capability_call`, the one host function of a helix/v1 guest, and the link through
// which it reaches the call (the wasmtime `Caller` idea). The link knows which guest function the
// host is running and the call's first decision: capability calls are served only while the entry
// function runs, never from a function the host itself called (start, alloc, dealloc, helix_panic);
// and once the host has decided that the call ends, every later capability call is refused at once
// with that decision, nothing more reaches the broker, and the guest's fuel counter is spent so its
// next check traps, which no guest handler can catch (ABI-FINAL-001 to ABI-FINAL-004).
// `capability_call_bulk` (capability ABI 2) is the same call with a buffer beside the envelope:
// a read's bytes are copied into it, a write's are read out of it (ABI-BULK-001 to -005).
import {
  BULK_MAX_PIECE,
  HOST_IMPORT_CAPABILITY_CALL,
  HOST_IMPORT_CAPABILITY_CALL_BULK,
  HOST_IMPORT_MODULE,
  scanJsonText,
} from '../../../abi/index.js';
import { GuestAbort } from './decision.js';
import { inBounds, packPtrLen, pagesOf, readBytes, writeBytes } from './guest-memory.js';
import type { BrokerAnswer, BulkPart } from './protocol.js';

/** Sends a capability request to the broker and waits for its answer (synchronously). */
export type BrokerLink = (request: Uint8Array, bulk?: BulkPart) => BrokerAnswer;

/** Where the host is in a call: the guest function it is running, or `panic` while it asks why a guest trapped. */
export type Phase = 'instantiate' | 'start' | 'alloc' | 'execute' | 'dealloc' | 'panic';

/** A call's first decision, with the fuel counter and the memory size when it was made. */
export interface Decision {
  /** What ended the call: a GuestAbort, or whatever else escaped a host function, kept as it was. */
  readonly error: unknown;
  readonly phase: Phase;
  readonly remaining: bigint;
  readonly memoryPages: number;
}

/** The counter after a decision: so far below zero that the guest's next check traps. */
const SPENT = -(1n << 62n);

type Fn = (...args: number[]) => unknown;

/** The host side of one instance: its import, its phase and the running call's decision. */
export class GuestLink {
  /** Set by the sandbox before each guest function it calls. */
  phase: Phase = 'instantiate';
  #decision: Decision | undefined;
  /** True while the host runs `alloc` to place a capability answer. */
  #answering = false;
  #memory: WebAssembly.Memory | undefined;
  #alloc: Fn | undefined;
  #fuel: WebAssembly.Global | undefined;

  constructor(private readonly broker: BrokerLink) {}

  /** The import object for an instance served by this link. */
  imports(): WebAssembly.Imports {
    const capabilityCall = (ptr: number, len: number): bigint => this.#capabilityCall(ptr >>> 0, len >>> 0);
    const capabilityCallBulk = (ptr: number, len: number, bufPtr: number, bufLen: number): bigint =>
      this.#capabilityCall(ptr >>> 0, len >>> 0, { ptr: bufPtr >>> 0, len: bufLen >>> 0 });
    return {
      [HOST_IMPORT_MODULE]: { [HOST_IMPORT_CAPABILITY_CALL]: capabilityCall, [HOST_IMPORT_CAPABILITY_CALL_BULK]: capabilityCallBulk },
    };
  }

  /** Binds the instance the link serves, once it exists (before any guest code runs). */
  bind(memory: WebAssembly.Memory, alloc: Fn, fuel: WebAssembly.Global): void {
    this.#memory = memory;
    this.#alloc = alloc;
    this.#fuel = fuel;
  }

  /** Starts a new call on a recycled instance. */
  begin(): void {
    this.#decision = undefined;
    this.#answering = false;
  }

  /** The call's first decision, if the host has made one. */
  get decision(): Decision | undefined {
    return this.#decision;
  }

  /**
   * Makes `error` the call's decision unless one was made before, and spends the guest's fuel;
   * returns what to throw: the error of the decision that stands.
   */
  #decide(error: unknown, phase: Phase = this.phase): unknown {
    if (this.#decision === undefined) {
      const fuel = this.#fuel;
      const memory = this.#memory;
      this.#decision = {
        error,
        phase,
        remaining: fuel === undefined ? 0n : (fuel.value as bigint),
        memoryPages: memory === undefined ? 0 : pagesOf(memory),
      };
      if (fuel !== undefined) fuel.value = SPENT;
    }
    return this.#decision.error;
  }

  /** Throws the decision, if one was made while a guest function ran (the guest caught it). */
  settle(): void {
    if (this.#decision !== undefined) throw this.#decision.error;
  }

  #capabilityCall(ptr: number, len: number, buffer?: Buffer): bigint {
    // Refused at once: nothing is read, forwarded, journaled or audited (ABI-FINAL-002).
    this.settle();
    // The trap being explained is the call's outcome; helix_panic only gets to say why.
    const name = buffer === undefined ? HOST_IMPORT_CAPABILITY_CALL : HOST_IMPORT_CAPABILITY_CALL_BULK;
    if (this.phase === 'panic')
      throw new GuestAbort('S-TOOL-TRAP', `${name} is not available in helix_panic.`, { phase: 'panic', import: name });
    try {
      return this.#serve(ptr, len, buffer);
    } catch (err) {
      throw this.#decide(err);
    }
  }

  /**
   * Reads the request with bounds checks, hands it to the broker and places the answer. A bulk
   * call's buffer is checked first, before anything is read or forwarded (ABI-BULK-003).
   */
  #serve(ptr: number, len: number, buffer?: Buffer): bigint {
    const memory = this.#memory;
    const alloc = this.#alloc;
    const fuel = this.#fuel;
    if (this.phase !== 'execute' || this.#answering || memory === undefined || alloc === undefined || fuel === undefined)
      throw this.#misplaced(buffer === undefined ? HOST_IMPORT_CAPABILITY_CALL : HOST_IMPORT_CAPABILITY_CALL_BULK);
    if (buffer !== undefined) checkBuffer(memory, ptr, len, buffer);
    if (!inBounds(memory, ptr, len)) {
      const name = buffer === undefined ? HOST_IMPORT_CAPABILITY_CALL : HOST_IMPORT_CAPABILITY_CALL_BULK;
      throw new GuestAbort('S-TOOL-BAD-POINTER', `${name}(${ptr}, ${len}) points outside the guest's memory.`, {
        import: name,
        ptr,
        len,
        memory_bytes: memory.buffer.byteLength,
      });
    }
    const request = readBytes(memory, ptr, len);
    const answer = buffer === undefined ? this.broker(request) : this.broker(request, bulkPart(memory, request, buffer));
    if (answer.kind === 'abort') throw new GuestAbort(answer.code, answer.message, answer.details);
    if (answer.bulk !== undefined && buffer !== undefined) {
      // The broker never answers more than the buffer holds; a host bug must not write past it.
      if (answer.bulk.length > buffer.len)
        throw new Error(`the broker answered ${answer.bulk.length} bulk bytes for a buffer of ${buffer.len}`);
      writeBytes(memory, buffer.ptr, answer.bulk);
    }
    // The call's cost in fuel; the guest's next check sees it (the counter is reloaded after calls).
    fuel.value = (fuel.value as bigint) - BigInt(answer.fuel);
    const response = answer.response;
    let outPtr: number;
    this.#answering = true;
    try {
      outPtr = (alloc(response.length) as number) >>> 0;
    } catch (err) {
      // A trap or a throw in alloc: the answer cannot be placed, and the call ends (ABI-FINAL-004).
      throw this.#decide(err, 'alloc');
    } finally {
      this.#answering = false;
    }
    this.settle();
    if (!inBounds(memory, outPtr, response.length)) {
      throw new GuestAbort('S-TOOL-BAD-POINTER', `alloc(${response.length}) returned ${outPtr}, outside the guest's memory.`, {
        export: 'alloc',
        ptr: outPtr,
        len: response.length,
      });
    }
    writeBytes(memory, outPtr, response);
    return packPtrLen(outPtr, response.length);
  }

  /** The fault for a capability call from anywhere but the entry function (ABI-FINAL-003). */
  #misplaced(name: string): GuestAbort {
    const details = { import: name };
    if (this.#answering) {
      return new GuestAbort(
        'S-TOOL-TRAP',
        `${name} was called from alloc while the host was placing the answer to another capability call; the host does not re-enter.`,
        { ...details, phase: 'alloc', reentrant: true },
      );
    }
    if (this.phase === 'instantiate' || this.phase === 'start') {
      // A recycled instance would not repeat the call, so a start function may make none (ABI-CALL-002).
      return new GuestAbort('S-TOOL-TRAP', `${name} is not available while the module starts.`, { ...details, phase: 'start' });
    }
    return new GuestAbort(
      'S-TOOL-TRAP',
      `${name} is not available in ${this.phase}, which the host called; only the entry function may make capability calls.`,
      { ...details, phase: this.phase },
    );
  }
}

/** A bulk call's buffer in guest memory. */
interface Buffer {
  readonly ptr: number;
  readonly len: number;
}

/** Refuses a bulk buffer outside the guest's memory (wrapping past 2^32 included) or over BULK_MAX_PIECE (ABI-BULK-003). */
function checkBuffer(memory: WebAssembly.Memory, reqPtr: number, reqLen: number, buffer: Buffer): void {
  const details = { import: HOST_IMPORT_CAPABILITY_CALL_BULK, buf_ptr: buffer.ptr, buf_len: buffer.len };
  if (buffer.len > BULK_MAX_PIECE) {
    throw new GuestAbort(
      'S-TOOL-BULK-BUFFER',
      `${HOST_IMPORT_CAPABILITY_CALL_BULK}(${reqPtr}, ${reqLen}, ${buffer.ptr}, ${buffer.len}) passes a buffer of ${buffer.len} bytes, above BULK_MAX_PIECE (${BULK_MAX_PIECE}).`,
      { ...details, max_bytes: BULK_MAX_PIECE },
    );
  }
  if (!inBounds(memory, buffer.ptr, buffer.len)) {
    throw new GuestAbort(
      'S-TOOL-BAD-POINTER',
      `${HOST_IMPORT_CAPABILITY_CALL_BULK}(${reqPtr}, ${reqLen}, ${buffer.ptr}, ${buffer.len}): the buffer [${buffer.ptr}, ${buffer.ptr + buffer.len}) lies outside the guest's memory of ${memory.buffer.byteLength} bytes.`,
      { ...details, memory_bytes: memory.buffer.byteLength },
    );
  }
}

/**
 * The buffer as the broker sees it: a view of its bytes when the request names `artifact.write`
 * (valid while the call is in flight; the worker copies it into the lane's bulk area), else its
 * room for a read. The name is peeked here only to pick which; the broker parses and checks the
 * request as for any call, and answers a request that is not a bulk capability with an error
 * whatever it was given.
 */
function bulkPart(memory: WebAssembly.Memory, request: Uint8Array, buffer: Buffer): BulkPart {
  return requestName(request) === 'artifact.write'
    ? { kind: 'write', data: new Uint8Array(memory.buffer, buffer.ptr, buffer.len) }
    : { kind: 'read', capacity: buffer.len };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The `name` of a request within the JSON bounds, or undefined. */
function requestName(request: Uint8Array): unknown {
  try {
    const text = decoder.decode(request);
    if (scanJsonText(text, { envelope: true }) !== undefined) return undefined;
    return (JSON.parse(text) as { name?: unknown } | null)?.name;
  } catch {
    return undefined;
  }
}
