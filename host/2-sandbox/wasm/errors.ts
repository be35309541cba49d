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

/** How a sum of initial sizes passes its bound, for the two errors below. */
function passes(initial: number, total: number, before: string): string {
  return total === initial ? '' : ` (${total} with the ${before} before it)`;
}

/**
 * A defined memory whose initial size, added to those of the memories before it, is over the
 * page cap that all of a module's memories share, so the module cannot load.
 */
export class MemoryCapError extends Error {
  override readonly name = 'MemoryCapError';

  /**
   * @param memoryIndex index of the memory in the memory index space
   * @param initial the memory's declared initial size in pages
   * @param cap the cap in pages
   * @param total initial pages of the defined memories up to and including this one
   */
  constructor(
    readonly memoryIndex: number,
    readonly initial: number,
    readonly cap: number,
    readonly total: number = initial,
  ) {
    super(
      `memory ${memoryIndex} needs ${initial} pages initially${passes(initial, total, 'memories')} but the cap is ${cap} pages for all memories together; ` +
        "raise limits.maxMemoryPages (and the policy ceiling) or shrink the module's initial memory",
    );
  }
}

/**
 * A defined table whose initial size, added to those of the tables before it, is over the
 * ceiling on elements that all of a module's tables share, so the module cannot load.
 */
export class TableCeilingError extends Error {
  override readonly name = 'TableCeilingError';

  /**
   * @param tableIndex index of the table in the table index space
   * @param initial the table's declared initial size in elements
   * @param ceiling the ceiling in elements
   * @param total initial elements of the defined tables up to and including this one
   */
  constructor(
    readonly tableIndex: number,
    readonly initial: number,
    readonly ceiling: number,
    readonly total: number = initial,
  ) {
    super(
      `table ${tableIndex} starts at ${initial} elements${passes(initial, total, 'tables')}, above the ceiling of ${ceiling} elements for all tables together`,
    );
  }
}
