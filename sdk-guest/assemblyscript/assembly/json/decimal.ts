// Correctly rounded conversion of JSON number text to f64. The standard library's parseFloat
// is off by an ulp (sometimes by a factor of ten) on long mantissas, so numbers that miss the
// exact fast path are converted with a small big-integer division instead.

import { BigNat } from "./bignat";

// Powers of ten that f64 holds exactly: one multiply or divide by them rounds correctly
// (Clinger's fast path) when the mantissa has at most 15 digits.
const EXACT_POWERS: StaticArray<f64> = [
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
const SMALL_POWERS: StaticArray<u32> = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000];

// 767 significant digits decide the rounding of any double; digits past this limit only
// matter as "something non-zero follows", which one extra digit 1 represents.
const MAX_DIGITS: i32 = 780;

/**
 * Converts the ASCII bytes `[base + start, base + end)`, already checked against the JSON
 * number grammar, to the nearest f64 (ties to even), as JSON.parse does. Values beyond the f64
 * range become Infinity, values below half the smallest subnormal become 0.
 */
export function decimalToDouble(base: usize, start: i32, end: i32): f64 {
  let i = start;
  const negative = load<u8>(base + <usize>i) == 0x2d;
  if (negative) i++;
  const digitsStart = i;

  // One pass without allocating: value = (all `count` significant digits) * 10^exponent,
  // and the first 19 of them in `small` for the fast path.
  let count = 0;
  let exponent = 0;
  let fraction = false;
  let small: u64 = 0;
  for (; i < end; i++) {
    const unit = <u32>load<u8>(base + <usize>i);
    if (unit == 0x2e) {
      fraction = true;
      continue;
    }
    const digit = unit - 0x30;
    if (digit >= 10) break;
    if (fraction) exponent--;
    if (count == 0 && digit == 0) continue;
    if (++count <= 19) small = small * 10 + digit;
  }
  const digitsEnd = i;
  if (i < end) exponent += readExponent(base, i + 1, end);

  let value: f64;
  if (count == 0) {
    value = 0;
  } else if (count <= 15 && exponent >= -22 && exponent <= 22) {
    value = <f64>small;
    value = exponent >= 0 ? value * unchecked(EXACT_POWERS[exponent]) : value / unchecked(EXACT_POWERS[-exponent]);
  } else if (count + exponent > 310) {
    value = Infinity;
  } else if (count + exponent < -324) {
    value = 0;
  } else {
    value = slowPath(base, digitsStart, digitsEnd, count, exponent);
  }
  return negative ? -value : value;
}

// Exact conversion with big integers. Reads at most MAX_DIGITS significant digits again; if
// non-zero digits were dropped, one digit 1 stands in for them.
function slowPath(base: usize, start: i32, end: i32, count: i32, exponent: i32): f64 {
  const digits = new BigNat();
  let kept = 0;
  let truncated = false;
  let chunk: u32 = 0;
  let chunkLength = 0;
  for (let i = start; i < end; i++) {
    const digit = <u32>load<u8>(base + <usize>i) - 0x30;
    if (digit >= 10 || (kept == 0 && digit == 0)) continue;
    if (kept == MAX_DIGITS) {
      if (digit != 0) truncated = true;
      continue;
    }
    kept++;
    chunk = chunk * 10 + digit;
    if (++chunkLength == 9) {
      digits.mulAdd(1000000000, chunk);
      chunk = 0;
      chunkLength = 0;
    }
  }
  if (chunkLength > 0) digits.mulAdd(unchecked(SMALL_POWERS[chunkLength]), chunk);
  exponent += count - kept;
  if (truncated) {
    digits.mulAdd(10, 1);
    exponent--;
  }
  return exponent >= 0 ? scaleUp(digits, exponent) : scaleDown(digits, -exponent);
}

// The exponent after 'e'/'E', clamped: anything this large is already out of range.
function readExponent(base: usize, i: i32, end: i32): i32 {
  let sign = 1;
  const unit = load<u8>(base + <usize>i);
  if (unit == 0x2d || unit == 0x2b) {
    if (unit == 0x2d) sign = -1;
    i++;
  }
  let value = 0;
  for (; i < end; i++) {
    value = value * 10 + (<i32>load<u8>(base + <usize>i) - 0x30);
    if (value > 100000) value = 100000;
  }
  return sign * value;
}

// digits * 10^power, an integer: keep its top 54 bits and round with the rest as sticky.
function scaleUp(digits: BigNat, power: i32): f64 {
  digits.mulPow10(power);
  const length = digits.bitLength();
  if (length <= 53) return build(digits.bits(0, length), 0);
  const shift = length - 54;
  return roundToDouble(digits.bits(shift, 54), shift, digits.anyBelow(shift));
}

// digits / 10^power: long division to a 54-bit quotient (fewer in the subnormal range).
function scaleDown(digits: BigNat, power: i32): f64 {
  const divisor = new BigNat();
  divisor.mulAdd(1, 1);
  divisor.mulPow10(power);
  // With shift = 54 - (len(digits) - len(divisor)) the quotient lies in [2^53, 2^55).
  let shift = 54 - (digits.bitLength() - divisor.bitLength());
  // Below 2^-1022 the quantum is fixed at 2^-1074, so the quotient needs no more bits.
  if (shift > 1075) shift = 1075;
  if (shift >= 0) digits.shiftLeft(shift);
  else divisor.shiftLeft(-shift);
  divisor.shiftLeft(55);
  let quotient: u64 = 0;
  for (let bit = 55; bit >= 0; bit--) {
    if (digits.compare(divisor) >= 0) {
      digits.subtract(divisor);
      quotient |= (<u64>1) << bit;
    }
    divisor.shiftRightOne();
  }
  let sticky = !digits.isZero();
  if (quotient >= (<u64>1) << 54) {
    sticky = sticky || (quotient & 1) != 0;
    quotient >>= 1;
    shift--;
  }
  return roundToDouble(quotient, -shift, sticky);
}

// Rounds `bits * 2^exponent` to 53 bits, ties to even: the lowest bit of `bits` is the rounding
// bit and `sticky` says whether anything non-zero lies below it.
function roundToDouble(bits: u64, exponent: i32, sticky: bool): f64 {
  const round = (bits & 1) != 0;
  let mantissa = bits >> 1;
  if (round && (sticky || (mantissa & 1) != 0)) mantissa++;
  return build(mantissa, exponent + 1);
}

// Exact `mantissa * 2^exponent` (mantissa at most 2^53, exponent at least -1074) as an f64.
function build(mantissa: u64, exponent: i32): f64 {
  if (mantissa == 0) return 0;
  while (mantissa >= (<u64>1) << 53) {
    mantissa >>= 1;
    exponent++;
  }
  while (mantissa < (<u64>1) << 52 && exponent > -1074) {
    mantissa <<= 1;
    exponent--;
  }
  // Still below 2^52 means a subnormal: biased exponent 0, the mantissa is the bit pattern.
  if (mantissa < (<u64>1) << 52) return reinterpret<f64>(mantissa);
  const biased = exponent + 1075;
  if (biased >= 2047) return Infinity;
  return reinterpret<f64>((<u64>biased << 52) | (mantissa - ((<u64>1) << 52)));
}
