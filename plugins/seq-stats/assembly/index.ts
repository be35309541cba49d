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

// Counting eight bytes per step (fuel is charged per instruction, and a table lookup per
// byte costs about twelve). `zeroBytes(y)` flags each zero byte of y exactly (no false
// positives, whatever the other bytes), so counting bytes equal to c is a popcount.
const ONES: u64 = 0x0101010101010101;
const LOW7: u64 = 0x7f7f7f7f7f7f7f7f;
const HIGHS: u64 = 0x8080808080808080;

@inline function zeroBytes(y: u64): u64 {
  return ~(((y & LOW7) + LOW7) | y) & HIGHS;
}

/** G, C, g and c in `n` bytes at `p`: the bytes seqkit counts for GC. */
function countGC(p: usize, n: i32): i64 {
  let count: i64 = 0;
  let i = 0;
  // (b | 0x24) == 0x67 exactly for C (0x43), G (0x47), c (0x63) and g (0x67).
  for (; i + 8 <= n; i += 8) count += <i64>popcnt(zeroBytes((load<u64>(p + <usize>i) | (ONES * 0x24)) ^ (ONES * 0x67)));
  for (; i < n; i++) if ((load<u8>(p + <usize>i) | 0x24) == 0x67) count++;
  return count;
}

/** Gap characters in `n` bytes at `p`: seqkit's default gap letters '-', '.' and space. */
function countGaps(p: usize, n: i32): i64 {
  let count: i64 = 0;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const word = load<u64>(p + <usize>i);
    count += <i64>popcnt(zeroBytes(word ^ (ONES * 0x2d)) | zeroBytes(word ^ (ONES * 0x2e)) | zeroBytes(word ^ (ONES * 0x20)));
  }
  for (; i < n; i++) {
    const byte = load<u8>(p + <usize>i);
    if (byte == 0x2d || byte == 0x2e || byte == 0x20) count++;
  }
  return count;
}

/**
 * Quality bytes of at least `threshold` (an ASCII value, 33 + Q). The reader has checked every
 * byte is '!'..'~', so b + (0x80 - threshold) stays below 0x100 and its high bit says b >= threshold.
 */
function countAtLeast(p: usize, n: i32, threshold: u8): i64 {
  const bias = ONES * <u64>(0x80 - threshold);
  let count: i64 = 0;
  let i = 0;
  for (; i + 8 <= n; i += 8) count += <i64>popcnt((load<u64>(p + <usize>i) + bias) & HIGHS);
  for (; i < n; i++) if (load<u8>(p + <usize>i) >= threshold) count++;
  return count;
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
      gc += countGC(reader.partPointer, reader.partLength);
      gaps += countGaps(reader.partPointer, reader.partLength);
    } else if (part == SeqPart.QUALITY) {
      q20 += countAtLeast(reader.partPointer, reader.partLength, Q20);
      q30 += countAtLeast(reader.partPointer, reader.partLength, Q30);
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

