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

/**
 * A defined memory whose initial size, added to those of the memories before it, is over the
 * page cap that all of a module's memories share, so the module cannot load.
 */
export class MemoryCapError extends Error {
  override readonly name = 'MemoryCapError';
  /** The memory's declared initial size in pages. */
  readonly initial: number;
  /** Initial pages of the defined memories up to and including this one. */
  readonly total: number;
  /** The cap in pages. */
  readonly cap: number;
  /** Index of the memory in the memory index space. */
  readonly memoryIndex: number;

  constructor(memoryIndex: number, initial: number, cap: number, total: number = initial) {
    const together = total === initial ? '' : ` (${total} with the memories before it)`;
    super(
      `memory ${memoryIndex} needs ${initial} pages initially${together} but the cap is ${cap} pages for all memories together; ` +
        'raise limits.maxMemoryPages (and the policy ceiling) or shrink the module\'s initial memory',
    );
    this.initial = initial;
    this.total = total;
    this.cap = cap;
    this.memoryIndex = memoryIndex;
  }
}

/**
 * A defined table whose initial size, added to those of the tables before it, is over the
 * ceiling on elements that all of a module's tables share, so the module cannot load.
 */
export class TableCeilingError extends Error {
  override readonly name = 'TableCeilingError';
  /** The table's declared initial size in elements. */
  readonly initial: number;
  /** Initial elements of the defined tables up to and including this one. */
  readonly total: number;
  /** The ceiling in elements. */
  readonly ceiling: number;
  /** Index of the table in the table index space. */
  readonly tableIndex: number;

  constructor(tableIndex: number, initial: number, ceiling: number, total: number = initial) {
    const together = total === initial ? '' : ` (${total} with the tables before it)`;
    super(`table ${tableIndex} starts at ${initial} elements${together}, above the ceiling of ${ceiling} elements for all tables together`);
    this.initial = initial;
    this.total = total;
    this.ceiling = ceiling;
    this.tableIndex = tableIndex;
  }
}
