// Errors of the WebAssembly decoder and instrumenter: a decode error carries the byte offset
// and a reason naming the rule or proposal, so a refusal can be acted on without a hex dump.

/** A module that is malformed, or uses something Helix does not accept. */
export class WasmDecodeError extends Error {
  override readonly name = 'WasmDecodeError';
  /** Byte offset in the module where the problem was found. */
  readonly offset: number;
  /** The reason without the offset, e.g. `unsupported opcode 0xfb 0x01 (GC proposal)`. */
  readonly reason: string;

  constructor(offset: number, reason: string) {
    super(`offset 0x${offset.toString(16)}: ${reason}`);
    this.offset = offset;
    this.reason = reason;
  }
}

/** A defined memory whose initial size is already over the page cap, so the module cannot load. */
export class MemoryCapError extends Error {
  override readonly name = 'MemoryCapError';
  /** The memory's declared initial size in pages. */
  readonly initial: number;
  /** The cap in pages. */
  readonly cap: number;
  /** Index of the memory in the memory index space. */
  readonly memoryIndex: number;

  constructor(memoryIndex: number, initial: number, cap: number) {
    super(
      `memory ${memoryIndex} needs ${initial} pages initially but the cap is ${cap} pages; ` +
        'raise limits.maxMemoryPages (and the policy ceiling) or shrink the module\'s initial memory',
    );
    this.initial = initial;
    this.cap = cap;
    this.memoryIndex = memoryIndex;
  }
}
