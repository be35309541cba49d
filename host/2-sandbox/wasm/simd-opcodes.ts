// Immediates of the 0xFD-prefixed (SIMD and relaxed SIMD) instructions, from the binary opcode
// tables of the fixed-width SIMD and relaxed SIMD specifications.

/** The immediate forms a SIMD instruction can have. */
export const SimdImm = {
  invalid: 0,
  none: 1,
  memarg: 2,
  memargLane: 3,
  lane: 4,
  v128: 5,
  shuffle: 6,
} as const;

/** First sub-opcode of relaxed SIMD; the proposal's instructions are 0x100 to 0x113. */
export const RELAXED_SIMD_FIRST = 0x100;
const RELAXED_SIMD_LAST = 0x113;

/** Sub-opcodes below 0x100 that the SIMD proposal left unassigned. */
const unassigned = [0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee];

const table = new Uint8Array(RELAXED_SIMD_LAST + 1).fill(SimdImm.none);
function mark(from: number, to: number, kind: number): void {
  for (let i = from; i <= to; i++) table[i] = kind;
}
mark(0x00, 0x0b, SimdImm.memarg); // v128.load, the extending and splat loads, v128.store
mark(0x0c, 0x0c, SimdImm.v128); // v128.const
mark(0x0d, 0x0d, SimdImm.shuffle); // i8x16.shuffle
mark(0x15, 0x22, SimdImm.lane); // extract_lane / replace_lane
mark(0x54, 0x5b, SimdImm.memargLane); // v128.loadN_lane / v128.storeN_lane
mark(0x5c, 0x5d, SimdImm.memarg); // v128.load32_zero / v128.load64_zero
for (const op of unassigned) table[op] = SimdImm.invalid;

/** The immediate form of SIMD sub-opcode `sub`, `SimdImm.invalid` when unknown. */
export function simdImmediate(sub: number): number {
  return sub < table.length ? table[sub]! : SimdImm.invalid;
}
