// `helix_v1.capability_call`, the one host function of a helix/v1 guest, and the link through
// which it reaches the call (the wasmtime `Caller` idea). The link knows which guest function the
// host is running and the call's first decision: capability calls are served only while the entry
// function runs, never from a function the host itself called (start, alloc, dealloc, helix_panic);
// and once the host has decided that the call ends, every later capability call is refused at once
// with that decision, nothing more reaches the broker, and the guest's fuel counter is spent so its
// next check traps, which no guest handler can catch (ABI-FINAL-001 to ABI-FINAL-004).
import { HOST_IMPORT_CAPABILITY_CALL, HOST_IMPORT_MODULE } from '../../abi/index.js';
import { GuestAbort } from './decision.js';
import { inBounds, packPtrLen, pagesOf, readBytes, writeBytes } from './guest-memory.js';
import type { BrokerAnswer } from './protocol.js';

/** Sends a capability request to the broker and waits for its answer (synchronously). */
export type BrokerLink = (request: Uint8Array) => BrokerAnswer;

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
    return { [HOST_IMPORT_MODULE]: { [HOST_IMPORT_CAPABILITY_CALL]: capabilityCall } };
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
      this.#decision = { error, phase, remaining: fuel === undefined ? 0n : (fuel.value as bigint), memoryPages: memory === undefined ? 0 : pagesOf(memory) };
      if (fuel !== undefined) fuel.value = SPENT;
    }
    return this.#decision.error;
  }

  /** Throws the decision, if one was made while a guest function ran (the guest caught it). */
  settle(): void {
    if (this.#decision !== undefined) throw this.#decision.error;
  }

  #capabilityCall(ptr: number, len: number): bigint {
    // Refused at once: nothing is read, forwarded, journaled or audited (ABI-FINAL-002).
    this.settle();
    // The trap being explained is the call's outcome; helix_panic only gets to say why.
    if (this.phase === 'panic') throw new GuestAbort('S-TOOL-TRAP', 'capability_call is not available in helix_panic.', { phase: 'panic', import: HOST_IMPORT_CAPABILITY_CALL });
    try {
      return this.#serve(ptr, len);
    } catch (err) {
      throw this.#decide(err);
    }
  }

  /** Reads the request with bounds checks, hands it to the broker and places the answer. */
  #serve(ptr: number, len: number): bigint {
    const memory = this.#memory;
    const alloc = this.#alloc;
    const fuel = this.#fuel;
    if (this.phase !== 'execute' || this.#answering || memory === undefined || alloc === undefined || fuel === undefined) throw this.#misplaced();
    if (!inBounds(memory, ptr, len)) {
      throw new GuestAbort('S-TOOL-BAD-POINTER', `capability_call(${ptr}, ${len}) points outside the guest's memory.`, { import: HOST_IMPORT_CAPABILITY_CALL, ptr, len, memory_bytes: memory.buffer.byteLength });
    }
    const answer = this.broker(readBytes(memory, ptr, len));
    if (answer.kind === 'abort') throw new GuestAbort(answer.code, answer.message, answer.details);
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
      throw new GuestAbort('S-TOOL-BAD-POINTER', `alloc(${response.length}) returned ${outPtr}, outside the guest's memory.`, { export: 'alloc', ptr: outPtr, len: response.length });
    }
    writeBytes(memory, outPtr, response);
    return packPtrLen(outPtr, response.length);
  }

  /** The fault for a capability call from anywhere but the entry function (ABI-FINAL-003). */
  #misplaced(): GuestAbort {
    const details = { import: HOST_IMPORT_CAPABILITY_CALL };
    if (this.#answering) {
      return new GuestAbort('S-TOOL-TRAP', 'capability_call was called from alloc while the host was placing the answer to another capability call; the host does not re-enter.', { ...details, phase: 'alloc', reentrant: true });
    }
    if (this.phase === 'instantiate' || this.phase === 'start') {
      // A recycled instance would not repeat the call, so a start function may make none (ABI-CALL-002).
      return new GuestAbort('S-TOOL-TRAP', 'capability_call is not available while the module starts.', { ...details, phase: 'start' });
    }
    return new GuestAbort('S-TOOL-TRAP', `capability_call is not available in ${this.phase}, which the host called; only the entry function may make capability calls.`, { ...details, phase: this.phase });
  }
}
