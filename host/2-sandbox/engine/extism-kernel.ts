// The Extism kernel (`extism:host/env`) as Helix's engine provides it to an extism/v1 plugin in
// a sandbox worker: memory blocks addressed as `index << 48 | offset`, the call's input, output and
// error, variables and config, logging. The semantics are those of @extism/extism 2.0.0-rc13's
// CallContext, the reference the conformance test holds this to (ABI-EXTISM-011), with one
// difference: a block past the memory cap is never allocated (the SDK allocates it, then refuses
// it, and counts its size until the call ends, as this kernel does).
// Its state belongs to one call: `begin` clears it, so no block or variable outlives a call
// (ABI-EXTISM-006).

/** Bytes in one page of Extism memory, as in linear memory. */
const PAGE = 65_536;
const OFFSET_MASK = (1n << 48n) - 1n;

/** A kernel block's address: its index in the high 16 bits. */
export function blockAddress(index: number): bigint {
  return BigInt(index) << 48n;
}

function indexOf(addr: bigint): number {
  return Number(addr >> 48n);
}

function offsetOf(addr: bigint): number {
  return Number(addr & OFFSET_MASK);
}

/** One block of kernel memory. */
class Block {
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}

/** The kernel's state for one call, and its functions. */
export class ExtismKernel {
  /** Block 0 is the SDK's reserved byte, so no real block has address 0; the input is block 1. */
  #blocks: (Block | null)[] = [];
  #bytes = 0;
  #input = 0;
  #output: number | null = null;
  #error: number | null = null;
  #vars = new Map<string, Uint8Array>();
  #varBytes = 0;
  #maxBytes = Infinity;
  /** The cap of kernel memory in bytes. */
  get maxBytes(): number {
    return this.#maxBytes;
  }
  #maxVarBytes = Infinity;
  readonly #decoder = new TextDecoder();

  /**
   * Starts a call: every block, variable, output and error of an earlier call is gone, the input
   * is block 1, and kernel memory is capped at `maxPages` pages (variables at as many bytes,
   * ABI-EXTISM-009), as Helix configured @extism/extism.
   */
  begin(input: Uint8Array, maxPages: number): void {
    this.#blocks = [new Block(new Uint8Array(1))];
    this.#bytes = 1;
    this.#vars = new Map();
    this.#varBytes = 0;
    this.#output = null;
    this.#error = null;
    this.#maxBytes = maxPages * PAGE;
    this.#maxVarBytes = maxPages * PAGE;
    this.#input = indexOf(this.alloc(input.length));
    this.#blocks[this.#input]?.bytes.set(input);
  }

  /**
   * How the call ended in the kernel: the error block's bytes if one was set, else the output
   * block's (the whole block, as the SDK reads it); null for either when none was set or the
   * block was freed.
   */
  end(): { output: Uint8Array | null; error: Uint8Array | null } {
    const idx = this.#error ?? this.#output;
    const block = idx === null ? null : this.#blocks[idx];
    const bytes = block === null || block === undefined ? null : block.bytes.slice();
    return this.#error !== null ? { output: null, error: bytes } : { output: bytes, error: null };
  }

  /** A new block of `size` bytes; address 0 when kernel memory would pass its cap. */
  alloc(size: bigint | number): bigint {
    const n = Number(size);
    const index = this.#blocks.length;
    if (this.#bytes + n > this.#maxBytes) {
      // The SDK keeps the refused block, unreachable, and counts it: so does this kernel.
      this.#blocks.push(null);
      this.#bytes += n;
      return 0n;
    }
    this.#blocks.push(new Block(new Uint8Array(n)));
    this.#bytes += n;
    return blockAddress(index);
  }

  /** A block's bytes (a view), or null when the address names none. */
  read(addr: bigint): Uint8Array | null {
    return this.#blocks[indexOf(addr)]?.bytes ?? null;
  }

  /** Stores `bytes` in a new block; its address, or 0 when kernel memory is full. */
  store(bytes: Uint8Array): bigint {
    const addr = this.alloc(bytes.length);
    if (addr !== 0n) this.#blocks[indexOf(addr)]!.bytes.set(bytes);
    return addr;
  }

  #free(addr: bigint): void {
    const index = indexOf(addr);
    const block = this.#blocks[index];
    if (block === null || block === undefined) return;
    this.#bytes -= block.bytes.length;
    this.#blocks[index] = null;
  }

  #block(addr: bigint): Block | undefined {
    return this.#blocks[indexOf(addr)] ?? undefined;
  }

  #string(addr: bigint): string | null {
    const bytes = this.read(addr);
    return bytes === null ? null : this.#decoder.decode(bytes);
  }

  /** Logging is silent, as Helix configures the SDK; the message's block is freed as the SDK does. */
  #log = (addr: bigint): void => this.#free(addr);

  /** The `extism:host/env` import object; its functions read the state of the call in progress. */
  readonly env: Record<string, (...args: never[]) => unknown> = {
    alloc: (n: bigint): bigint => this.alloc(n),
    free: (addr: bigint): void => this.#free(addr),
    length: (addr: bigint): bigint => BigInt(this.read(addr)?.length ?? 0),
    length_unsafe: (addr: bigint): bigint => BigInt(this.read(addr)?.length ?? 0),
    // A load from no block gives what the SDK's gives: 0 as an i32, a TypeError as an i64.
    load_u8: (addr: bigint): number | undefined => this.#block(addr)?.view.getUint8(offsetOf(addr)),
    load_u64: (addr: bigint): bigint | undefined => this.#block(addr)?.view.getBigUint64(offsetOf(addr), true),
    store_u8: (addr: bigint, n: number): void => this.#block(addr)?.view.setUint8(offsetOf(addr), n),
    store_u64: (addr: bigint, n: bigint): void => this.#block(addr)?.view.setBigUint64(offsetOf(addr), n, true),
    input_offset: (): bigint => blockAddress(this.#input),
    input_length: (): bigint => BigInt(this.#blocks[this.#input]?.bytes.length ?? 0),
    input_load_u8: (addr: bigint): number | undefined => this.#blocks[this.#input]?.view.getUint8(offsetOf(addr)),
    input_load_u64: (addr: bigint): bigint | undefined => this.#blocks[this.#input]?.view.getBigUint64(offsetOf(addr), true),
    output_set: (addr: bigint, length: bigint): void => {
      const block = this.#block(addr);
      if (block === undefined)
        throw new Error(`cannot assign to this block (addr=${addr.toString(16).padStart(16, '0')}; length=${length})`);
      if (length > block.bytes.length) throw new Error('length longer than target block');
      this.#output = indexOf(addr);
    },
    error_set: (addr: bigint): void => {
      if (this.#block(addr) === undefined) throw new Error('cannot assign error to this block');
      this.#error = indexOf(addr);
    },
    error_get: (): bigint => (this.#error === null ? 0n : blockAddress(this.#error)),
    // Helix gives every plugin an empty config; the key's block is freed, as the SDK does.
    config_get: (addr: bigint): bigint => {
      if (this.read(addr) !== null) this.#free(addr);
      return 0n;
    },
    var_get: (addr: bigint): bigint => {
      const key = this.#string(addr);
      if (key === null) return 0n;
      const value = this.#vars.get(key);
      const stored = value === undefined ? 0n : this.store(value);
      this.#free(addr);
      return stored;
    },
    var_set: (addr: bigint, valueAddr: bigint): void => this.#setVar(addr, valueAddr),
    log_trace: this.#log,
    log_debug: this.#log,
    log_info: this.#log,
    log_warn: this.#log,
    log_error: this.#log,
    // The SDK's priority of its `silent` level.
    get_log_level: (): number => 0x7fff_ffff,
  };

  #setVar(addr: bigint, valueAddr: bigint): void {
    const key = this.#string(addr);
    if (key === null) return;
    const old = this.#vars.get(key)?.length ?? 0;
    if (valueAddr === 0n) {
      this.#vars.delete(key);
      this.#varBytes -= old;
      return;
    }
    const value = this.read(valueAddr);
    if (value === null) return;
    const size = this.#varBytes + value.length - old;
    if (size > this.#maxVarBytes) {
      // The SDK sets the call's error rather than trapping.
      const addrOfError = this.store(
        new TextEncoder().encode(`var memory limit exceeded: ${size} bytes requested, ${this.#maxVarBytes} allowed`),
      );
      if (addrOfError !== 0n) this.#error = indexOf(addrOfError);
      return;
    }
    this.#varBytes = size;
    this.#vars.set(key, value.slice());
  }
}
