// SHA-256 (FIPS 180-4) over static memory: the compression function and the initial hash value,
// for a guest that hashes in its own hot loop. Import-free, so a module built without the rest of
// the SDK (the host's wasm tests compile it from source text) uses this same code.

/** Round constants, section 4.2.2. */
const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** The initial hash value, section 5.3.3: 8 words to copy into a state before the first block. */
export const SHA256_H0: usize = memory.data<u32>([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

// Plain loads and stores on static regions: managed arrays would add bounds checks and
// shadow-stack spills to every access of the hot loop.
@inline function word(base: usize, index: i32): u32 {
  return load<u32>(base + (<usize>index << 2));
}

@inline function setWord(base: usize, index: i32, value: u32): void {
  store<u32>(base + (<usize>index << 2), value);
}

/**
 * The compression function, section 6.2.2: folds one block of 16 message words (`block`, each
 * word as a number, not as big-endian bytes) into the 8-word `state`, with `w` as scratch room for
 * the 64-word schedule.
 */
export function sha256Compress(state: usize, block: usize, w: usize): void {
  for (let t = 0; t < 16; t++) setWord(w, t, word(block, t));
  for (let t = 16; t < 64; t++) {
    const x = word(w, t - 15);
    const y = word(w, t - 2);
    const s0 = rotr<u32>(x, 7) ^ rotr<u32>(x, 18) ^ (x >>> 3);
    const s1 = rotr<u32>(y, 17) ^ rotr<u32>(y, 19) ^ (y >>> 10);
    setWord(w, t, word(w, t - 16) + s0 + word(w, t - 7) + s1);
  }
  let a = word(state, 0), b = word(state, 1), c = word(state, 2), d = word(state, 3);
  let e = word(state, 4), f = word(state, 5), g = word(state, 6), h = word(state, 7);
  for (let t = 0; t < 64; t++) {
    const t1 = h + (rotr<u32>(e, 6) ^ rotr<u32>(e, 11) ^ rotr<u32>(e, 25)) + ((e & f) ^ (~e & g)) + word(K, t) + word(w, t);
    const t2 = (rotr<u32>(a, 2) ^ rotr<u32>(a, 13) ^ rotr<u32>(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  setWord(state, 0, word(state, 0) + a);
  setWord(state, 1, word(state, 1) + b);
  setWord(state, 2, word(state, 2) + c);
  setWord(state, 3, word(state, 3) + d);
  setWord(state, 4, word(state, 4) + e);
  setWord(state, 5, word(state, 5) + f);
  setWord(state, 6, word(state, 6) + g);
  setWord(state, 7, word(state, 7) + h);
}
