// Just enough arbitrary-precision natural-number arithmetic for exact decimal-to-double
// conversion: multiply-add by small numbers, shifts, compare and subtract.

/** A natural number in little-endian 32-bit limbs, without leading zero limbs. */
export class BigNat {
  private limbs: Array<u32> = [];

  isZero(): bool {
    return this.limbs.length == 0;
  }

  /** this = this * factor + addend. */
  mulAdd(factor: u32, addend: u32): void {
    let carry: u64 = addend;
    const limbs = this.limbs;
    for (let i = 0, n = limbs.length; i < n; i++) {
      const product = <u64>unchecked(limbs[i]) * factor + carry;
      unchecked((limbs[i] = <u32>product));
      carry = product >> 32;
    }
    if (carry != 0) limbs.push(<u32>carry);
  }

  /** this = this * 10^power. */
  mulPow10(power: i32): void {
    while (power >= 9) {
      this.mulAdd(1000000000, 0);
      power -= 9;
    }
    let factor: u32 = 1;
    while (power-- > 0) factor *= 10;
    if (factor != 1) this.mulAdd(factor, 0);
  }

  /** Number of significant bits (0 for zero). */
  bitLength(): i32 {
    const n = this.limbs.length;
    if (n == 0) return 0;
    return (n - 1) * 32 + (32 - <i32>clz(unchecked(this.limbs[n - 1])));
  }

  /** `count` bits (at most 64) starting at bit `from`, as an integer. */
  bits(from: i32, count: i32): u64 {
    let result: u64 = 0;
    for (let i = count - 1; i >= 0; i--) result = (result << 1) | <u64>this.bit(from + i);
    return result;
  }

  /** True when any bit below `count` is set. */
  anyBelow(count: i32): bool {
    const whole = count >> 5;
    for (let i = 0; i < whole && i < this.limbs.length; i++) if (unchecked(this.limbs[i]) != 0) return true;
    for (let i = whole << 5; i < count; i++) if (this.bit(i)) return true;
    return false;
  }

  shiftLeft(count: i32): void {
    if (count == 0 || this.isZero()) return;
    const words = count >> 5;
    const offset = count & 31;
    const source = this.limbs;
    const result = new Array<u32>(source.length + words + 1);
    for (let i = 0; i < source.length; i++) {
      const value = <u64>unchecked(source[i]) << offset;
      unchecked((result[i + words] |= <u32>value));
      unchecked((result[i + words + 1] |= <u32>(value >> 32)));
    }
    this.limbs = result;
    this.trim();
  }

  shiftRightOne(): void {
    const limbs = this.limbs;
    const n = limbs.length;
    for (let i = 0; i < n; i++) {
      const high: u32 = i + 1 < n ? unchecked(limbs[i + 1]) << 31 : 0;
      unchecked((limbs[i] = (unchecked(limbs[i]) >>> 1) | high));
    }
    this.trim();
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`. */
  compare(other: BigNat): i32 {
    const a = this.limbs;
    const b = other.limbs;
    if (a.length != b.length) return a.length < b.length ? -1 : 1;
    for (let i = a.length - 1; i >= 0; i--) {
      const x = unchecked(a[i]);
      const y = unchecked(b[i]);
      if (x != y) return x < y ? -1 : 1;
    }
    return 0;
  }

  /** this = this - other; requires this >= other. */
  subtract(other: BigNat): void {
    const a = this.limbs;
    const b = other.limbs;
    let borrow: i64 = 0;
    for (let i = 0; i < a.length; i++) {
      let difference = <i64>unchecked(a[i]) - borrow - (i < b.length ? <i64>unchecked(b[i]) : 0);
      borrow = difference < 0 ? 1 : 0;
      if (difference < 0) difference += <i64>1 << 32;
      unchecked((a[i] = <u32>difference));
    }
    this.trim();
  }

  private bit(index: i32): u32 {
    const word = index >> 5;
    if (word >= this.limbs.length) return 0;
    return (unchecked(this.limbs[word]) >>> (index & 31)) & 1;
  }

  private trim(): void {
    const limbs = this.limbs;
    while (limbs.length > 0 && unchecked(limbs[limbs.length - 1]) == 0) limbs.pop();
  }
}
