// The standard genetic code (NCBI table 1) over IUPAC codes: each nucleotide byte becomes a
// 4-bit set of bases (A=1, C=2, G=4, T/U=8), and a codon of three sets maps to the amino acid
// every base combination agrees on, else X, as seqkit translate resolves ambiguous codons
// (ACN -> T, but YTN -> X). Gaps and spaces are the empty set: their codons are X, except a
// codon of three '-', which seqkit writes as a gap '-'.

/** `BASES` value of a byte that is not allowed in a nucleotide sequence. */
export const INVALID: u8 = 0xff;

// Byte -> base set; INVALID for anything else.
const BASES: usize = memory.data(256);
// Base set -> the set of the complementary bases (A<->T, C<->G).
const COMPLEMENT: usize = memory.data(16);
// (set1 << 8 | set2 << 4 | set3) -> amino acid letter.
const AMINO: usize = memory.data(4096);

// NCBI table 1 in TCAG order: codon index = 16 * first + 4 * second + third, T=0 C=1 A=2 G=3.
const TABLE1 = "FFLLSSSSYY**CC*WLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG";

function setCodes(codes: string, set: u8): void {
  for (let i = 0; i < codes.length; i++) {
    store<u8>(BASES + <usize>codes.charCodeAt(i), set);
    store<u8>(BASES + <usize>(codes.charCodeAt(i) | 0x20), set);
  }
}

// Position of a single-base set in TCAG order.
function tcag(single: i32): i32 {
  return single == 8 ? 0 : single == 2 ? 1 : single == 1 ? 2 : 3;
}

/** Builds the tables; call once per call (no state survives between calls). */
export function prepareCode(): void {
  memory.fill(BASES, INVALID, 256);
  setCodes("A", 1);
  setCodes("C", 2);
  setCodes("G", 4);
  setCodes("TU", 8);
  setCodes("R", 1 | 4);
  setCodes("Y", 2 | 8);
  setCodes("S", 2 | 4);
  setCodes("W", 1 | 8);
  setCodes("K", 4 | 8);
  setCodes("M", 1 | 2);
  setCodes("B", 2 | 4 | 8);
  setCodes("D", 1 | 4 | 8);
  setCodes("H", 1 | 2 | 8);
  setCodes("V", 1 | 2 | 4);
  setCodes("N", 15);
  // Gaps and spaces keep their position (seqkit counts them) but code for no base.
  store<u8>(BASES + 0x2d, 0);
  store<u8>(BASES + 0x2e, 0);
  store<u8>(BASES + 0x20, 0);
  store<u8>(BASES + 0x09, 0);
  for (let set = 0; set < 16; set++) {
    const swapped = ((set & 1) << 3) | ((set & 8) >> 3) | ((set & 2) << 1) | ((set & 4) >> 1);
    store<u8>(COMPLEMENT + <usize>set, <u8>swapped);
  }
  for (let index = 0; index < 4096; index++) {
    const a = index >> 8;
    const b = (index >> 4) & 15;
    const c = index & 15;
    let amino: i32 = 0;
    // Every combination of one base from each set; X as soon as two disagree.
    for (let x = 1; x < 16 && amino != 0x58; x <<= 1) {
      if ((a & x) == 0) continue;
      for (let y = 1; y < 16 && amino != 0x58; y <<= 1) {
        if ((b & y) == 0) continue;
        for (let z = 1; z < 16; z <<= 1) {
          if ((c & z) == 0) continue;
          const letter = <i32>TABLE1.charCodeAt(16 * tcag(x) + 4 * tcag(y) + tcag(z));
          if (amino == 0) amino = letter;
          else if (amino != letter) {
            amino = 0x58;
            break;
          }
        }
      }
    }
    store<u8>(AMINO + <usize>index, <u8>(amino == 0 ? 0x58 : amino));
  }
}

/** The base set of byte `byte`, or INVALID. */
// @ts-ignore: decorator
@inline export function baseSet(byte: u8): u8 {
  return load<u8>(BASES + <usize>byte);
}

// The letter of a codon of gaps or spaces starting at `at` (the same bytes either way round).
function gapCodon(at: usize): u8 {
  return load<u8>(at) == 0x2d && load<u8>(at + 1) == 0x2d && load<u8>(at + 2) == 0x2d ? 0x2d : 0x58;
}

/**
 * Translates `codons` codons of the `length` bytes at `sequence` into `out` (one letter each).
 * `frame` is 1, 2, 3 (from offset frame - 1) or -1, -2, -3 (the same on the reverse
 * complement, read from the end without building it). The bytes must all be valid.
 */
export function translate(sequence: usize, length: i32, frame: i32, out: usize): i32 {
  const offset = abs(frame) - 1;
  const codons = length > offset ? (length - offset) / 3 : 0;
  if (frame > 0) {
    let at = sequence + <usize>offset;
    for (let i = 0; i < codons; i++) {
      const index = (<usize>baseSet(load<u8>(at)) << 8) | (<usize>baseSet(load<u8>(at + 1)) << 4) | <usize>baseSet(load<u8>(at + 2));
      store<u8>(out + <usize>i, index != 0 ? load<u8>(AMINO + index) : gapCodon(at));
      at += 3;
    }
  } else {
    // Codon i of the reverse complement: the complements of bytes end - 3i, end - 3i - 1, ...
    let at = sequence + <usize>(length - 1 - offset);
    for (let i = 0; i < codons; i++) {
      const first = load<u8>(COMPLEMENT + <usize>baseSet(load<u8>(at)));
      const second = load<u8>(COMPLEMENT + <usize>baseSet(load<u8>(at - 1)));
      const third = load<u8>(COMPLEMENT + <usize>baseSet(load<u8>(at - 2)));
      const index = (<usize>first << 8) | (<usize>second << 4) | <usize>third;
      store<u8>(out + <usize>i, index != 0 ? load<u8>(AMINO + index) : gapCodon(at - 2));
      at -= 3;
    }
  }
  return codons;
}
