// seq.stats: the figures `seqkit stats -a` reports for a FASTA or FASTQ artifact (plain or
// gzip), computed the way seqkit 2.3.0 computes them. Streams the input with the SDK's
// SeqReader a line piece at a time; only the record lengths are kept (see lengths.ts).

import { Artifact, ArtifactReader, JSONObject, Result, run, SeqPart, SeqReader } from "@helix/sdk-as";
import { addLength, kth, MAX_LONG_RECORDS, n50, resetLengths, SHORT_LIMIT, sortLengths } from "./lengths";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

// Counting sixteen bytes per step with SIMD (fuel is charged per instruction, one unit for a
// v128 one as for any other). A lane compare gives 0xff (-1) where it holds, so subtracting
// it from a byte accumulator counts; the accumulators are summed at the end of each part,
// and at most 255 steps go into one (a byte lane holds 255). The bytes short of a multiple of
// 16 at the end of a part are taken by one more load of the part's last 16 bytes, with the
// lanes already counted masked off.
const LANE_INDEX: v128 = i8x16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

// Totals of one counting pass.
let countedA: i64 = 0;
let countedB: i64 = 0;

@inline function laneSum(v: v128): i64 {
  const words = i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(v));
  return <i64>(i32x4.extract_lane(words, 0) + i32x4.extract_lane(words, 1) + i32x4.extract_lane(words, 2) + i32x4.extract_lane(words, 3));
}

// The mask of the lanes of the last 16 bytes that a step-by-16 pass over n bytes has not seen.
@inline function tailMask(n: i32): v128 {
  return i8x16.ge_u(LANE_INDEX, i8x16.splat(<i8>(16 - (n & 15))));
}

/**
 * Sequence bytes: G, C, g and c (the bytes seqkit counts for GC) into countedA, and seqkit's
 * default gap letters '-', '.' and space into countedB.
 */
function countSequence(p: usize, n: i32): void {
  const fold = i8x16.splat(0x24);
  const gcValue = i8x16.splat(0x67);
  const dash = i8x16.splat(0x2d);
  const dot = i8x16.splat(0x2e);
  const space = i8x16.splat(0x20);
  let gcTotal: i64 = 0;
  let gapTotal: i64 = 0;
  let i = 0;
  while (i + 16 <= n) {
    let gc = i8x16.splat(0);
    let gaps = i8x16.splat(0);
    const stop = min(n & ~15, i + 255 * 16);
    for (; i < stop; i += 16) {
      const v = v128.load(p + <usize>i);
      // (b | 0x24) == 0x67 exactly for C (0x43), G (0x47), c (0x63) and g (0x67).
      gc = i8x16.sub(gc, i8x16.eq(v128.or(v, fold), gcValue));
      gaps = i8x16.sub(gaps, v128.or(v128.or(i8x16.eq(v, dash), i8x16.eq(v, dot)), i8x16.eq(v, space)));
    }
    gcTotal += laneSum(gc);
    gapTotal += laneSum(gaps);
  }
  if (i < n) {
    if (n >= 16) {
      const v = v128.load(p + <usize>(n - 16));
      const fresh = tailMask(n);
      gcTotal += <i64>popcnt(i8x16.bitmask(v128.and(i8x16.eq(v128.or(v, fold), gcValue), fresh)));
      gapTotal += <i64>popcnt(i8x16.bitmask(v128.and(v128.or(v128.or(i8x16.eq(v, dash), i8x16.eq(v, dot)), i8x16.eq(v, space)), fresh)));
    } else {
      for (; i < n; i++) {
        const byte = load<u8>(p + <usize>i);
        if ((byte | 0x24) == 0x67) gcTotal++;
        else if (byte == 0x2d || byte == 0x2e || byte == 0x20) gapTotal++;
      }
    }
  }
  countedA = gcTotal;
  countedB = gapTotal;
}

/**
 * Quality bytes of at least `lowThreshold` into countedA and of at least `highThreshold` into
 * countedB (ASCII values, 33 + Q; unsigned compares, so any byte works).
 */
function countQuality(p: usize, n: i32, lowThreshold: u8, highThreshold: u8): void {
  const low = i8x16.splat(<i8>(lowThreshold - 1));
  const high = i8x16.splat(<i8>(highThreshold - 1));
  let lowTotal: i64 = 0;
  let highTotal: i64 = 0;
  let i = 0;
  while (i + 16 <= n) {
    let lows = i8x16.splat(0);
    let highs = i8x16.splat(0);
    const stop = min(n & ~15, i + 255 * 16);
    for (; i < stop; i += 16) {
      const v = v128.load(p + <usize>i);
      lows = i8x16.sub(lows, i8x16.gt_u(v, low));
      highs = i8x16.sub(highs, i8x16.gt_u(v, high));
    }
    lowTotal += laneSum(lows);
    highTotal += laneSum(highs);
  }
  if (i < n) {
    if (n >= 16) {
      const v = v128.load(p + <usize>(n - 16));
      const fresh = tailMask(n);
      lowTotal += <i64>popcnt(i8x16.bitmask(v128.and(i8x16.gt_u(v, low), fresh)));
      highTotal += <i64>popcnt(i8x16.bitmask(v128.and(i8x16.gt_u(v, high), fresh)));
    } else {
      for (; i < n; i++) {
        const byte = load<u8>(p + <usize>i);
        if (byte >= lowThreshold) lowTotal++;
        if (byte >= highThreshold) highTotal++;
      }
    }
  }
  countedA = lowTotal;
  countedB = highTotal;
}

/** Phred+33 bytes of Q20 and Q30. */
const Q20: u8 = 33 + 20;
const Q30: u8 = 33 + 30;

function handle(input: JSONObject): Result {
  // The input schema guarantees a string id; the host has checked it is an artifact id.
  const id = changetype<string>(input.getString("sequences"));
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);
  resetLengths();

  const reader = new SeqReader(new ArtifactReader(id, info.isGzip));
  let records: i64 = 0;
  let sum: i64 = 0;
  let minimum: i64 = i64.MAX_VALUE;
  let maximum: i64 = 0;
  let gc: i64 = 0;
  let gaps: i64 = 0;
  let q20: i64 = 0;
  let q30: i64 = 0;
  for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
    if (part == SeqPart.SEQUENCE) {
      countSequence(reader.partPointer, reader.partLength);
      gc += countedA;
      gaps += countedB;
    } else if (part == SeqPart.QUALITY) {
      countQuality(reader.partPointer, reader.partLength, Q20, Q30);
      q20 += countedA;
      q30 += countedB;
    } else if (part == SeqPart.RECORD_END) {
      const length = reader.sequenceLength;
      records++;
      sum += length;
      if (length < minimum) minimum = length;
      if (length > maximum) maximum = length;
      if (!addLength(length)) return tooManyRecords(reader, id);
    }
  }
  if (!reader.ok) return reader.toResult("reading " + id);
  sortLengths();

  const out = new JSONObject()
    .setString("format", reader.formatName)
    .setInteger("num_seqs", records)
    .setInteger("sum_len", sum)
    .setInteger("min_len", records > 0 ? minimum : 0)
    .setNumber("avg_len", records > 0 ? round1(<f64>sum / <f64>records) : 0)
    .setInteger("max_len", maximum);
  setQuartiles(out, records);
  out.setInteger("sum_gap", gaps).setInteger("n50", records > 0 ? n50(sum) : 0);
  setPercent(out, "q20_pct", q20, sum, records);
  setPercent(out, "q30_pct", q30, sum, records);
  setPercent(out, "gc_pct", gc, sum, records);
  return Result.ok(out);
}

// Q1, Q2 and Q3 of the lengths exactly as seqkit 2.3.0's LengthStats: the median, and the
// medians of the lower and upper halves, where for an odd count both halves include the
// middle length; a median of an even count is the mean of the two middle lengths. When all
// lengths are equal seqkit reports Q1 = Q3 = length / 2, and so does this.
function setQuartiles(out: JSONObject, n: i64): void {
  if (n == 0) {
    out.setNumber("q1", 0).setNumber("q2", 0).setNumber("q3", 0);
    return;
  }
  const low = kth(0);
  if (low == kth(n - 1)) {
    out.setNumber("q1", <f64>low / 2).setNumber("q2", <f64>low).setNumber("q3", <f64>low / 2);
    return;
  }
  const half = (n & 1) == 0 ? n / 2 : (n + 1) / 2;
  const upperStart = n / 2;
  out.setNumber("q1", median(0, half)).setNumber("q2", median(0, n)).setNumber("q3", median(upperStart, half));
}

// Median of the `count` sorted lengths starting at index `from`.
function median(from: i64, count: i64): f64 {
  if ((count & 1) == 1) return <f64>kth(from + count / 2);
  return <f64>(kth(from + count / 2 - 1) + kth(from + count / 2)) / 2;
}

// seqkit's rounding (shenwei356/util math.Round): trunc((f + 0.5/10^n) * 10^n) / 10^n, in
// float64 as Go computes it, so the figures agree to the last digit seqkit prints.
function round1(f: f64): f64 {
  return Math.trunc((f + 0.5 / 10.0) * 10.0) / 10.0;
}

function round2(f: f64): f64 {
  return Math.trunc((f + 0.5 / 100.0) * 100.0) / 100.0;
}

// A percentage of all bases, rounded as seqkit rounds it: 0 for an input without records,
// null where seqkit prints NaN (records, but no bases at all).
function setPercent(out: JSONObject, key: string, count: i64, sum: i64, records: i64): void {
  if (records == 0) out.setNumber(key, 0);
  else if (sum == 0) out.setNull(key);
  else out.setNumber(key, round2(<f64>count / <f64>sum * 100));
}

function tooManyRecords(reader: SeqReader, id: string): Result {
  reader.close();
  const details = new JSONObject()
    .setString("sequences", id)
    .setInteger("record", reader.records)
    .setInteger("line", reader.lineNumber)
    .setInteger("max_long_records", MAX_LONG_RECORDS)
    .setInteger("long_record_length", SHORT_LIMIT);
  return Result.error(
    "I-REQ-TOO-LARGE",
    "more than " + MAX_LONG_RECORDS.toString() + " records of " + SHORT_LIMIT.toString() + " bases or more, the most seq.stats keeps for quartiles and N50",
    "split the input into several artifacts and call seq.stats on each",
    details,
  );
}

