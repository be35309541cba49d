// Bounds-checked access to a guest's linear memory: every pointer and length a guest hands
// back is checked here before the host reads or writes a byte (ABI-CALL-004).

/** Splits `execute`'s packed i64 into (ptr, len), both unsigned 32-bit. */
export function unpackPtrLen(packed: bigint): { ptr: number; len: number } {
  return { ptr: Number(BigInt.asUintN(32, packed >> 32n)), len: Number(BigInt.asUintN(32, packed)) };
}

/** Packs (ptr, len) the way `execute` and `capability_call` return them. */
export function packPtrLen(ptr: number, len: number): bigint {
  return (BigInt(ptr >>> 0) << 32n) | BigInt(len >>> 0);
}

/** Whether [ptr, ptr+len) lies inside `memory`. */
export function inBounds(memory: WebAssembly.Memory, ptr: number, len: number): boolean {
  return ptr >= 0 && len >= 0 && ptr + len <= memory.buffer.byteLength;
}

/** A copy of guest bytes; the caller has checked bounds. */
export function readBytes(memory: WebAssembly.Memory, ptr: number, len: number): Uint8Array {
  return new Uint8Array(memory.buffer, ptr, len).slice();
}

/** Writes bytes at ptr; the caller has checked bounds. */
export function writeBytes(memory: WebAssembly.Memory, ptr: number, bytes: Uint8Array): void {
  new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
}

/** Memory size in 64 KiB pages. */
export function pagesOf(memory: WebAssembly.Memory): number {
  return memory.buffer.byteLength / 65_536;
}
