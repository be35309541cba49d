// seq.kmer_count: counts the k-mers (k 1 to 31) of every record of a FASTA or FASTQ artifact,
// plain or gzip, streaming sequence parts through the SDK's SeqReader (records are never held).
// K-mers with a base other than A, C, G, T (any case) are skipped; spaces and tabs inside
// lines are ignored. Returns totals and the top N; writes the whole table as a TSV artifact.

import { Artifact, ArtifactReader, ArtifactWriter, JSONArray, JSONObject, Log, Result, run, SeqPart, SeqReader } from "@helix/sdk-as";
import { addKmer, compact, countAt, keyAt, MAX_BITS, MAX_DISTINCT, resetTable, sortByKmer } from "./table";
import { topEntries } from "./top";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

/** The declared output role (manifest `declaredOutputs`). */
const ROLE = "table";
/** Longest input label used in the default output label (200, the host's limit, minus the prefix). */
const MAX_SOURCE_LABEL: i32 = 180;
const STAGE_SIZE: i32 = 64 * 1024;
const STAGE: usize = memory.data(STAGE_SIZE);

// Byte -> 0..3 for A C G T (either case), SPACE for spaces and tabs, OTHER for the rest.
const CODES: usize = memory.data(256);
const SPACE: u8 = 4;
const OTHER: u8 = 5;
const LETTERS = "ACGT";

// Counting state, carried from one sequence part to the next within a record.
let k: i32 = 0;
let canonical: bool = false;
let forward: u64 = 0;
let reverse: u64 = 0;
let run_: i32 = 0;
let totalKmers: i64 = 0;
let bases: i64 = 0;
let others: i64 = 0;

function handle(input: JSONObject): Result {
  // The input schema guarantees the id, k in 1..31, top in 0..10000, min_count >= 1.
  const id = changetype<string>(input.getString("fasta"));
  k = <i32>input.getInteger("k");
  canonical = input.getBool("canonical", false);
  const limit = <i32>input.getInteger("top", 10);
  const minCount = <u32>input.getInteger("min_count", 1);
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);

  prepareCodes();
  resetTable(k);
  const reader = new SeqReader(new ArtifactReader(id, info.isGzip));
  for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
    if (part == SeqPart.SEQUENCE) {
      if (!countPart(reader.partPointer, reader.partLength)) return tableFull(reader);
    } else if (part == SeqPart.RECORD_END) {
      run_ = 0;
    }
  }
  if (!reader.ok) return reader.toResult("artifact.read " + id);

  const n = compact();
  const top = topEntries(n, limit);
  const topList = new JSONArray();
  for (let i = 0; i < min(limit, n); i++) {
    const entry = load<i32>(top + (<usize>i << 2));
    topList.push(new JSONObject().setString("kmer", kmerText(keyAt(entry))).setInteger("count", countAt(entry)));
  }
  heap.free(top);

  sortByKmer(0, n - 1);
  // Labels are at most 200 characters: a long input label gives way to the id.
  const requested = input.getString("label");
  const source = info.label;
  const label = requested !== null ? requested : k.toString() + "-mer counts of " + (source !== null && source.length <= MAX_SOURCE_LABEL ? source : id);
  const writer = new ArtifactWriter(ROLE, "tsv", label);
  const rows = writeTable(writer, n, minCount);
  if (rows < 0) return writer.toResult("artifact.write " + ROLE);
  const tableId = writer.finish();
  if (tableId === null) return writer.toResult("artifact.write " + ROLE);

  Log.info("kmer_count.finished", new JSONObject()
    .setString("fasta", id)
    .setString("table", tableId)
    .setInteger("k", k)
    .setInteger("distinct_kmers", n)
    .setInteger("total_kmers", totalKmers));
  return Result.ok(new JSONObject()
    .setString("table", tableId)
    .setInteger("k", k)
    .setBool("canonical", canonical)
    .setInteger("records", reader.records)
    .setInteger("bases", bases)
    .setInteger("other_characters", others)
    .setInteger("total_kmers", totalKmers)
    .setInteger("distinct_kmers", n)
    .setInteger("table_rows", rows)
    .set("top", topList));
}

function prepareCodes(): void {
  memory.fill(CODES, OTHER, 256);
  for (let i = 0; i < 4; i++) {
    const letter = LETTERS.charCodeAt(i);
    store<u8>(CODES + <usize>letter, <u8>i);
    store<u8>(CODES + <usize>(letter | 0x20), <u8>i);
  }
  store<u8>(CODES + 0x20, SPACE);
  store<u8>(CODES + 0x09, SPACE);
}

// Counts the k-mers ending in this part of a record's sequence; false when the table is full.
// The state lives in locals inside the loop (globals cost a load and a store per use).
function countPart(pointer: usize, length: i32): bool {
  const size = k;
  const kmerMask: u64 = (<u64>1 << (<u64>size << 1)) - 1;
  const high = <u64>((size - 1) << 1);
  const both = canonical;
  let f = forward;
  let r = reverse;
  let n = run_;
  let counted: i64 = 0;
  let acgt: i64 = 0;
  let other: i64 = 0;
  let full = false;
  for (let i = 0; i < length; i++) {
    const code = <u64>load<u8>(CODES + <usize>load<u8>(pointer + <usize>i));
    if (code < 4) {
      f = ((f << 2) | code) & kmerMask;
      r = (r >> 2) | ((3 - code) << high);
      acgt++;
      n++;
      if (n >= size) {
        if (!addKmer(both && r < f ? r : f)) {
          full = true;
          break;
        }
        counted++;
      }
    } else if (code == <u64>OTHER) {
      // An N (or any other code) ends every k-mer that would include it.
      n = 0;
      other++;
    }
  }
  forward = f;
  reverse = r;
  run_ = n;
  totalKmers += counted;
  bases += acgt;
  others += other;
  return !full;
}

function tableFull(reader: SeqReader): Result {
  const details = new JSONObject()
    .setInteger("k", k)
    .setInteger("max_distinct_kmers", MAX_DISTINCT)
    .setInteger("record", reader.records);
  return Result.error(
    "I-REQ-TOO-LARGE",
    "more than " + MAX_DISTINCT.toString() + " distinct " + k.toString() + "-mers (reached in record " + reader.records.toString() +
      "): seq.kmer_count's table holds at most that many (2^" + MAX_BITS.toString() + " slots, three quarters full) and never drops a k-mer",
    "lower k (k <= 9 always fits: 4^9 = 262144), set canonical to true to fold each k-mer with its reverse complement, or split the input and add the tables",
    details,
  );
}

// The k-mer's letters, first base in the highest bits.
function kmerText(kmer: u64): string {
  let text = "";
  for (let j = k - 1; j >= 0; j--) text += LETTERS.charAt(<i32>((kmer >> (<u64>j << 1)) & 3));
  return text;
}

// Writes "kmer\tcount" rows with count >= minCount, sorted by k-mer, after a header line;
// returns the rows written, or -1 when the writer failed.
function writeTable(writer: ArtifactWriter, n: i32, minCount: u32): i32 {
  let staged = <i32>String.UTF8.encodeUnsafe(changetype<usize>("kmer\tcount\n"), 11, STAGE);
  let rows = 0;
  for (let i = 0; i < n; i++) {
    const count = countAt(i);
    if (count < minCount) continue;
    // A row is at most 31 letters, a tab, 10 digits and a newline.
    if (staged + 48 > STAGE_SIZE) {
      if (!writer.writeUtf8(STAGE, staged)) return -1;
      staged = 0;
    }
    const kmer = keyAt(i);
    for (let j = 0; j < k; j++) {
      store<u8>(STAGE + <usize>(staged + j), <u8>LETTERS.charCodeAt(<i32>((kmer >> (<u64>(k - 1 - j) << 1)) & 3)));
    }
    staged += k;
    store<u8>(STAGE + <usize>staged, 0x09);
    staged = writeDecimal(staged + 1, count);
    store<u8>(STAGE + <usize>staged, 0x0a);
    staged++;
    rows++;
  }
  if (staged > 0 && !writer.writeUtf8(STAGE, staged)) return -1;
  return rows;
}

// Writes `value` in decimal at STAGE + at; returns the offset after it.
function writeDecimal(at: i32, value: u32): i32 {
  let digits = 1;
  for (let rest = value / 10; rest > 0; rest /= 10) digits++;
  let v = value;
  for (let j = digits - 1; j >= 0; j--) {
    store<u8>(STAGE + <usize>(at + j), <u8>(0x30 + v % 10));
    v /= 10;
  }
  return at + digits;
}
