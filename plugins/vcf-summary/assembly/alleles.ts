// Classifies one ALT allele against REF the way htslib's bcf_set_variant_type does (the rule
// `bcftools stats` counts with): trim the longest common prefix, then the common suffix, and
// look at what is left. Bytes are compared case-insensitively, in place, without strings.

/** Allele classes. */
export const REF_LIKE: i32 = 0; // '.', ALT equal to REF, or a reference placeholder (<*>, <X>, <NON_REF>, X)
export const SNV: i32 = 1;
export const MNP: i32 = 2;
export const INDEL: i32 = 3;
export const SYMBOLIC: i32 = 4; // <DEL>, <INS:ME>, ... and breakends (t[p[, ]p]t, .t, t.)
export const OTHER: i32 = 5; // complex: what is left after trimming differs in length and is not empty
export const OVERLAP: i32 = 6; // '*', an allele missing because of an overlapping deletion

/** For an SNV: the differing REF and ALT bases, upper case (set by `classify`). */
export let snvRef: u8 = 0;
export let snvAlt: u8 = 0;

// ASCII upper case of a byte; other bytes unchanged.
// @ts-ignore: decorator
@inline function upper(byte: u8): u8 {
  return byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte;
}

// True when the `length` bytes at `at` are `text` (ASCII).
function equals(at: usize, length: i32, text: string): bool {
  if (length != text.length) return false;
  for (let i = 0; i < length; i++) if (<i32>load<u8>(at + <usize>i) != text.charCodeAt(i)) return false;
  return true;
}

// True when a byte of the span is '[' or ']'.
function hasBracket(at: usize, length: i32): bool {
  for (let i = 0; i < length; i++) {
    const byte = load<u8>(at + <usize>i);
    if (byte == 0x5b || byte == 0x5d) return true;
  }
  return false;
}

/** The class of ALT allele `alt` (`altLength` bytes) against REF `ref` (`refLength` bytes, at least 1). */
export function classify(ref: usize, refLength: i32, alt: usize, altLength: i32): i32 {
  const first = load<u8>(alt);
  if (altLength == 1) {
    if (first == 0x2a) return OVERLAP; // '*'
    if (first == 0x2e) return REF_LIKE; // '.'
    if (refLength == 1) {
      const r = upper(load<u8>(ref));
      const a = upper(first);
      // mpileup writes X for "no alternative seen".
      if (r == a || a == 0x58) return REF_LIKE;
      snvRef = r;
      snvAlt = a;
      return SNV;
    }
  }
  if (first == 0x3c) {
    if (equals(alt, altLength, "<*>") || equals(alt, altLength, "<X>") || equals(alt, altLength, "<NON_REF>")) return REF_LIKE;
    return SYMBOLIC;
  }
  if (hasBracket(alt, altLength)) return SYMBOLIC;
  // Single breakends: a dot before or after the bases.
  if (altLength > 1 && (first == 0x2e || load<u8>(alt + <usize>(altLength - 1)) == 0x2e)) return SYMBOLIC;

  let start = 0;
  const shorter = min(refLength, altLength);
  while (start < shorter && upper(load<u8>(ref + <usize>start)) == upper(load<u8>(alt + <usize>start))) start++;
  if (start == refLength && start == altLength) return REF_LIKE;
  if (start == refLength || start == altLength) return INDEL;
  // The suffix never eats the first differing base of either allele.
  let refEnd = refLength - 1;
  let altEnd = altLength - 1;
  while (refEnd > start && altEnd > start && upper(load<u8>(ref + <usize>refEnd)) == upper(load<u8>(alt + <usize>altEnd))) {
    refEnd--;
    altEnd--;
  }
  if (altEnd == start || refEnd == start) {
    if (altEnd == refEnd) {
      snvRef = upper(load<u8>(ref + <usize>start));
      snvAlt = upper(load<u8>(alt + <usize>start));
      return SNV;
    }
    // One side is down to its first differing base: when that base matches the other side's
    // last remaining one, the rest of the longer side is an insertion or deletion.
    return upper(load<u8>(ref + <usize>refEnd)) == upper(load<u8>(alt + <usize>altEnd)) ? INDEL : OTHER;
  }
  return refEnd - start == altEnd - start ? MNP : OTHER;
}

/** True for a transition (A<->G, C<->T) between two upper-case bases; false for a transversion. */
export function isTransition(a: u8, b: u8): bool {
  // A=0x41 G=0x47 differ by 6, C=0x43 T=0x54 by 17; no transversion pair does.
  const difference = a > b ? a - b : b - a;
  return difference == 6 || difference == 17;
}

/** True for A, C, G or T (upper case). */
export function isBase(byte: u8): bool {
  return byte == 0x41 || byte == 0x43 || byte == 0x47 || byte == 0x54;
}
