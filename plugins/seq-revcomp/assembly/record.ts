// One FASTA record's sequence, held whole (a reverse complement starts with the last base):
// complemented as it is appended, kept in 64 KiB blocks outside the managed heap so a long
// record never needs a copy to grow, and written out backwards in lines of a given width.

import { ArtifactWriter } from "@helix/sdk-as";

// Small blocks on purpose: the allocator only reuses a freed block for a request of a smaller
// size class, so 1 MiB blocks could never fill the holes 1 MiB read pieces leave, and memory
// would grow by a piece per read; 64 KiB blocks fill those holes.
const BLOCK_BITS: i32 = 16;
const BLOCK_SIZE: i32 = 1 << BLOCK_BITS;
const BLOCK_MASK: i32 = BLOCK_SIZE - 1;
/** Blocks a record may use: with the reader's and writer's buffers this fits 256 pages. */
const MAX_BLOCKS: i32 = 128;

/** Longest record, in sequence characters (8 Mi). */
export const MAX_RECORD_LENGTH: i32 = MAX_BLOCKS * BLOCK_SIZE;

/** `appendSequence` results other than the index of an invalid character. */
export const APPEND_OK: i32 = -1;
export const APPEND_TOO_LONG: i32 = -2;

// Complement of each byte, case kept; SKIP for whitespace inside a line; 0 for a byte that
// is not allowed in a nucleotide sequence (every byte of 0x80 and up).
const SKIP: u8 = 0xff;
const COMPLEMENT: usize = memory.data(256);
// The complements of two bytes at once, indexed by the pair as a little-endian u16; 0 when
// either byte is not a plain nucleotide code (invalid, or whitespace). Eight bytes then cost
// four loads instead of eight trips through a byte loop, which fuel charges per instruction.
const PAIRS: usize = memory.data(65536 * 2, 2);
const CODES: usize = memory.data(128);

// Block addresses (heap.alloc'd on first use, reused by later records) and the staging area
// where reversed lines are assembled before they go to the writer.
const BLOCKS: usize = memory.data(MAX_BLOCKS * 4, 4);
const STAGE_SIZE: i32 = 64 * 1024;
const STAGE: usize = memory.data(STAGE_SIZE);

/** Longest header line, in bytes of UTF-8 after the '>'. */
export const MAX_HEADER_BYTES: i32 = 65536;
// The current record's header (after '>'), as UTF-8 bytes.
const HEADER: usize = memory.data(MAX_HEADER_BYTES);
/** Appended to every header line, after the description. */
const HEADER_SUFFIX = " revcomp\n";

let blocksAllocated: i32 = 0;
let length: i32 = 0;
let headerLength: i32 = 0;

function pair(a: string, b: string): void {
  for (let i = 0; i < a.length; i++) {
    store<u8>(COMPLEMENT + <usize>a.charCodeAt(i), <u8>b.charCodeAt(i));
    store<u8>(COMPLEMENT + <usize>b.charCodeAt(i), <u8>a.charCodeAt(i));
  }
}

/** Builds the complement table; called once per call (no state survives between calls anyway). */
export function prepareComplement(): void {
  memory.fill(COMPLEMENT, 0, 256);
  // IUPAC: A-T, C-G, R-Y (AG/CT), K-M (GT/AC), B-V (not A / not T), D-H (not C / not G);
  // S (CG), W (AT) and N are their own complements; U (RNA) pairs with A.
  pair("ACRKBDacrkbd", "TGYMVHtgymvh");
  pair("SWNswn-.", "SWNswn-.");
  store<u8>(COMPLEMENT + 0x55, 0x41);
  store<u8>(COMPLEMENT + 0x75, 0x61);
  store<u8>(COMPLEMENT + 0x20, SKIP);
  store<u8>(COMPLEMENT + 0x09, SKIP);
  let codes = 0;
  for (let byte = 0; byte < 128; byte++) {
    const complement = load<u8>(COMPLEMENT + <usize>byte);
    if (complement != 0 && complement != SKIP) {
      store<u8>(CODES + <usize>codes, <u8>byte);
      codes++;
    }
  }
  memory.fill(PAIRS, 0, 65536 * 2);
  for (let i = 0; i < codes; i++) {
    const first = <usize>load<u8>(CODES + <usize>i);
    const low = <u16>load<u8>(COMPLEMENT + first);
    for (let j = 0; j < codes; j++) {
      const second = <usize>load<u8>(CODES + <usize>j);
      store<u16>(PAIRS + ((first | (second << 8)) << 1), low | (<u16>load<u8>(COMPLEMENT + second) << 8));
    }
  }
}

/** Starts an empty record with an empty header. */
export function resetRecord(): void {
  length = 0;
  headerLength = 0;
}

/** Appends `byteLength` bytes to the header; false when it would pass MAX_HEADER_BYTES. */
export function appendHeader(source: usize, byteLength: i32): bool {
  if (headerLength + byteLength > MAX_HEADER_BYTES) return false;
  memory.copy(HEADER + <usize>headerLength, source, <usize>byteLength);
  headerLength += byteLength;
  return true;
}

/** The header so far, as text (for messages). */
export function headerText(): string {
  return String.UTF8.decodeUnsafe(HEADER, <usize>headerLength);
}

/** Sequence characters in the current record. */
export function recordLength(): i32 {
  return length;
}

/**
 * Appends the complement of every character of the `length` UTF-8 bytes at `source` (spaces
 * and tabs skipped). Returns APPEND_OK, APPEND_TOO_LONG when the record would pass
 * MAX_RECORD_LENGTH, or the byte index of the first character that is not a nucleotide code.
 */
export function appendSequence(source: usize, byteLength: i32): i32 {
  let i = 0;
  while (i < byteLength) {
    const index = length >> BLOCK_BITS;
    if (index >= blocksAllocated) {
      if (index >= MAX_BLOCKS) return APPEND_TOO_LONG;
      store<usize>(BLOCKS + (<usize>index << 2), heap.alloc(<usize>BLOCK_SIZE));
      blocksAllocated = index + 1;
    }
    const block = load<usize>(BLOCKS + (<usize>index << 2));
    const start = block + <usize>(length & BLOCK_MASK);
    // Each byte yields at most one, so a span this long cannot overflow the block.
    const spanEnd = i + min(byteLength - i, BLOCK_SIZE - (length & BLOCK_MASK));
    let out = start;
    while (i < spanEnd) {
      // Eight plain codes at a time while they last.
      for (; i + 8 <= spanEnd; i += 8) {
        const word = load<u64>(source + <usize>i);
        const a = <u64>load<u16>(PAIRS + ((<usize>word & 0xffff) << 1));
        const b = <u64>load<u16>(PAIRS + ((<usize>(word >> 16) & 0xffff) << 1));
        const c = <u64>load<u16>(PAIRS + ((<usize>(word >> 32) & 0xffff) << 1));
        const d = <u64>load<u16>(PAIRS + (<usize>(word >> 48) << 1));
        if ((<i32>(a == 0) | <i32>(b == 0) | <i32>(c == 0) | <i32>(d == 0)) != 0) break;
        store<u64>(out, a | (b << 16) | (c << 32) | (d << 48));
        out += 8;
      }
      // Then up to eight bytes by pairs, or one by one at whitespace, an invalid byte or the
      // last odd byte.
      const stop = min(i + 8, spanEnd);
      while (i < stop) {
        if (i + 2 <= stop) {
          const both = load<u16>(PAIRS + (<usize>load<u16>(source + <usize>i) << 1));
          if (both != 0) {
            store<u16>(out, both);
            out += 2;
            i += 2;
            continue;
          }
        }
        // Bytes of 0x80 and up (non-ASCII) map to 0 in the 256-entry table.
        const complement = load<u8>(COMPLEMENT + <usize>load<u8>(source + <usize>i));
        if (complement == 0) return i;
        store<u8>(out, complement);
        out += <usize>(complement != SKIP);
        i++;
      }
    }
    length += <i32>(out - start);
  }
  return APPEND_OK;
}

/**
 * Writes the record: `>`, its header and " revcomp", then its characters last to first (they
 * are complemented already), `width` per line (0: one line), each line ending in LF. False
 * when the writer failed.
 */
export function writeRecord(writer: ArtifactWriter, width: i32): bool {
  let staged = 0;
  // The header line goes through the staging area too, so a record costs one writer call
  // per 64 KiB rather than several per record.
  if (headerLength + 16 <= STAGE_SIZE) {
    store<u8>(STAGE, 0x3e);
    memory.copy(STAGE + 1, HEADER, <usize>headerLength);
    staged = 1 + headerLength;
    staged += <i32>String.UTF8.encodeUnsafe(changetype<usize>(HEADER_SUFFIX), HEADER_SUFFIX.length, STAGE + <usize>staged);
  } else if (!writer.write(">") || !writer.writeUtf8(HEADER, headerLength) || !writer.write(HEADER_SUFFIX)) {
    return false;
  }
  let remaining = length;
  let column = 0;
  const lineWidth = width > 0 ? width : i32.MAX_VALUE;
  while (remaining > 0) {
    // A run: the most characters that stay in one block, one line and the staging area.
    const position = remaining - 1;
    const block = load<usize>(BLOCKS + (<usize>(position >> BLOCK_BITS) << 2));
    const inBlock = (position & BLOCK_MASK) + 1;
    const run = min(min(inBlock, lineWidth - column), STAGE_SIZE - 1 - staged);
    let from = block + <usize>(position & BLOCK_MASK);
    let to = STAGE + <usize>staged;
    const end = to + <usize>run;
    // Eight at a time: load the eight bytes ending at `from`, reverse them in the register.
    while (to + 8 <= end) {
      store<u64>(to, bswap<u64>(load<u64>(from - 7)));
      to += 8;
      from -= 8;
    }
    if (to + 4 <= end) {
      store<u32>(to, bswap<u32>(load<u32>(from - 3)));
      to += 4;
      from -= 4;
    }
    while (to < end) {
      store<u8>(to, load<u8>(from));
      to++;
      from--;
    }
    staged += run;
    remaining -= run;
    column += run;
    if (column == lineWidth) {
      store<u8>(STAGE + <usize>staged, 0x0a);
      staged++;
      column = 0;
    }
    if (staged >= STAGE_SIZE - 1) {
      if (!writer.writeUtf8(STAGE, staged)) return false;
      staged = 0;
    }
  }
  if (column > 0) {
    store<u8>(STAGE + <usize>staged, 0x0a);
    staged++;
  }
  return staged == 0 || writer.writeUtf8(STAGE, staged);
}

