// AssemblyScript fixture for the wasm tests and the overhead measurement: SHA-256 compression
// rounds over a generated buffer, compute-heavy and free of imports. The SHA-256 itself is the
// SDK's (sdk-guest/assemblyscript/assembly/sha256.ts), the one the benchmark toolpack uses too.
import { SHA256_H0, sha256Compress } from "../../../../sdk-guest/assemblyscript/assembly/sha256";

const STATE = memory.data(32);
const BLOCK = memory.data(64);
const W = memory.data(256);
const DATA = memory.data(16384);

/** Fills `len` bytes, then compresses every whole block of them `rounds` times; the first state word. */
export function hash(len: i32, rounds: i32): u32 {
  for (let i = 0; i < len; i++) store<u8>(DATA + i, <u8>(i * 31 + 7));
  memory.copy(STATE, SHA256_H0, 32);
  for (let r = 0; r < rounds; r++) {
    for (let off = 0; off + 64 <= len; off += 64) {
      // The message is big-endian words; the compression function takes them as numbers.
      for (let i = 0; i < 16; i++) store<u32>(BLOCK + (i << 2), bswap<u32>(load<u32>(DATA + off + (i << 2))));
      sha256Compress(STATE, BLOCK, W);
    }
  }
  return load<u32>(STATE);
}
