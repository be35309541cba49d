// vcf.summary: streams a VCF artifact (plain or gzip) line by line and counts what
// `bcftools stats` reports in its SN and TSTV sections: records, variant classes, multiallelic
// sites, transitions and transversions, plus records per chromosome and the sample count.
// Only each line's first five columns are copied; the rest is scanned for tabs. The per-line
// path uses module state and static memory: calls on managed objects pay for the collector's
// shadow stack, which at millions of lines is most of the cost.

import { Artifact, ArtifactReader, ErrorCode, JSONArray, JSONObject, Log, Result, run } from "@helix/sdk-as";
import { classify, INDEL, isBase, isTransition, MNP, OTHER, OVERLAP, REF_LIKE, snvAlt, snvRef, SNV, SYMBOLIC } from "./alleles";
import { addPart, field, fieldLength, fieldStart, limitLine, lineLength, lineOverflow, linePointer, lineTabs, MAX_FIELDS, resetLine, wantFields } from "./fields";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

/** Most bytes kept of a line's leading columns (CHROM to ALT): room for long sequence-resolved alleles. */
const MAX_LEADING_BYTES: i32 = 4 * 1024 * 1024;
/** Chromosomes listed one by one in the output; all are counted. */
const MAX_LISTED: i32 = 1000;
const DATA_FIELDS: i32 = 5;
const HEADER_NAMES: string[] = ["#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO", "FORMAT"];
const FILEFORMAT = "##fileformat=VCF";
const FORMAT_HINT = "pass a VCF: a first line ##fileformat=VCFv4.x, then ## meta lines, a tab-separated #CHROM POS ID REF ALT QUAL FILTER INFO [FORMAT sample...] header line, and one record per line with as many columns (plain or gzip)";
const CLASSES: i32 = 7;

// Records with at least one allele of each class, and alleles of each class (i64 by class).
const RECORDS_BY_CLASS: usize = memory.data(CLASSES << 3, 8);
const ALLELES_BY_CLASS: usize = memory.data(CLASSES << 3, 8);

let vcfId: string = "";
let fileformat: string = "";
let line: i64 = 0;
let headerColumns: i32 = 0;
let records: i64 = 0;
let samples: i64 = 0;
let noAlts: i64 = 0;
let multiallelic: i64 = 0;
let multiallelicSnvs: i64 = 0;
let transitions: i64 = 0;
let transversions: i64 = 0;
// Chromosomes in order of first appearance, their record counts, and an index by name.
let chromIndex: Map<string, i32> = new Map<string, i32>();
let chromNames: string[] = [];
let chromCounts: i64[] = [];
// The previous record's CHROM bytes, so a run of records on one chromosome needs no lookup.
let lastChrom: usize = 0;
let lastChromLength: i32 = -1;
let lastChromCapacity: i32 = 0;
let lastCount: i64 = 0;
let lastIndex: i32 = -1;

function handle(input: JSONObject): Result {
  // The input schema guarantees a string id; the host has checked it is an artifact id.
  vcfId = changetype<string>(input.getString("vcf"));
  const info = Artifact.stat(vcfId);
  if (!info.ok) return info.toResult("artifact.stat " + vcfId);
  const failure = readAll(new ArtifactReader(vcfId, info.isGzip));
  if (failure !== null) return failure;
  Log.info("vcf_summary.finished", new JSONObject()
    .setString("vcf", vcfId)
    .setString("compression", info.isGzip ? "gzip" : "none")
    .setInteger("records", records)
    .setInteger("samples", samples));
  return Result.ok(summary());
}

/** Reads the whole VCF; null on success, else the error result. */
function readAll(reader: ArtifactReader): Result | null {
  limitLine(MAX_LEADING_BYTES);
  let lineStart = true;
  let seenFirst = false;
  let decided = false;
  while (reader.nextLinePartBytes()) {
    const part = reader.partPointer;
    const length = reader.partLength;
    if (lineStart) {
      line++;
      resetLine(MAX_FIELDS);
      lineStart = false;
      seenFirst = false;
      decided = false;
    }
    // The line's first byte decides (a part may hold a single byte of a line that a read
    // piece cuts): a record keeps only CHROM, POS, ID, REF and ALT.
    if (!seenFirst && length > 0) {
      seenFirst = true;
      if (load<u8>(part) != 0x23) {
        wantFields(DATA_FIELDS);
        decided = true;
      }
    }
    addPart(part, length);
    if (!decided && lineLength >= 2) {
      // '##' meta lines are only scanned (line 1 is kept for its fileformat); '#CHROM' keeps nine names.
      if (load<u8>(linePointer + 1) == 0x23 && line > 1) wantFields(0);
      decided = true;
    }
    if (reader.partEndsLine) {
      const failure = endLine();
      if (failure !== null) return failure;
      lineStart = true;
    }
  }
  if (!reader.ok) return reader.toResult("artifact.read " + reader.artifactId);
  if (line == 0) return notVcf(1, "the artifact is empty", new JSONObject());
  if (headerColumns == 0) return notVcf(line, "no #CHROM header line", new JSONObject());
  flushChromosome();
  return null;
}

function endLine(): Result | null {
  if (lineOverflow) {
    return Result.error(
      "I-REQ-TOO-LARGE",
      "line " + line.toString() + ": the columns CHROM to ALT are longer than " + MAX_LEADING_BYTES.toString() + " bytes",
      "vcf.summary holds the first five columns of a record in memory; represent very long alleles symbolically (<DEL>, <INS>) or split the record",
      new JSONObject().setString("vcf", vcfId).setInteger("line", line).setInteger("max_bytes", MAX_LEADING_BYTES),
    );
  }
  const first = lineLength > 0 ? load<u8>(linePointer) : <u8>0;
  if (first != 0x23 && line > 1 && headerColumns > 0 && (lineLength > 0 || lineTabs > 0)) return record();
  if (line == 1) {
    const text = field(0);
    if (!text.startsWith(FILEFORMAT)) {
      return notVcf(1, "the first line is not ##fileformat=VCFv4.x", new JSONObject().setString("found", clip(text, 60)));
    }
    fileformat = text.substring(FILEFORMAT.length - 3);
    return null;
  }
  // Blank lines (an empty last line, a stray CR LF) carry nothing.
  if (lineLength == 0 && lineTabs == 0) return null;
  if (first == 0x23) {
    if (lineLength >= 2 && load<u8>(linePointer + 1) == 0x23) {
      if (headerColumns > 0) return notVcf(line, "a ## meta-information line after the #CHROM header line", new JSONObject());
      return null;
    }
    return header();
  }
  return notVcf(line, "a record before the #CHROM header line", new JSONObject());
}

// The #CHROM line: fixed column names, then one column per sample.
function header(): Result | null {
  const columns = lineTabs + 1;
  if (headerColumns > 0) return notVcf(line, "a second #CHROM header line", new JSONObject());
  const named = min(columns, HEADER_NAMES.length);
  for (let i = 0; i < named; i++) {
    const name = field(i);
    if (name != HEADER_NAMES[i]) {
      return notVcf(line, "header column " + (i + 1).toString() + " is '" + clip(name, 40) + "', expected '" + HEADER_NAMES[i] + "'",
        new JSONObject().setInteger("column", i + 1).setString("found", clip(name, 40)).setString("expected", HEADER_NAMES[i]));
    }
  }
  if (columns < 8) {
    return notVcf(line, "the header line has " + columns.toString() + " columns; a VCF has at least 8 (CHROM to INFO)",
      new JSONObject().setInteger("columns", columns));
  }
  headerColumns = columns;
  samples = columns > 9 ? columns - 9 : 0;
  return null;
}

function record(): Result | null {
  const columns = lineTabs + 1;
  if (columns != headerColumns) {
    return notVcf(line, "the record has " + columns.toString() + " columns, the header line " + headerColumns.toString(),
      new JSONObject().setInteger("columns", columns).setInteger("expected_columns", headerColumns));
  }
  const chromLength = fieldLength(0);
  if (chromLength == 0) return notVcf(line, "empty CHROM", new JSONObject().setInteger("column", 1));
  if (!isPosition(fieldStart(1), fieldLength(1))) {
    return notVcf(line, "POS '" + clip(field(1), 40) + "' is not a position", new JSONObject().setInteger("column", 2));
  }
  const ref = fieldStart(3);
  const refLength = fieldLength(3);
  if (refLength == 0) return notVcf(line, "empty REF", new JSONObject().setInteger("column", 4));
  const alt = fieldStart(4);
  const altLength = fieldLength(4);
  if (altLength == 0) return notVcf(line, "empty ALT (write '.' for none)", new JSONObject().setInteger("column", 5));

  // Each comma-separated allele is classified on its own; the record counts once in every
  // class one of its alleles has, as bcftools stats counts sites.
  let mask = 0;
  let alleles = 0;
  let start = 0;
  for (let i = 0; i <= altLength; i++) {
    if (i < altLength && load<u8>(alt + <usize>i) != 0x2c) continue;
    if (i == start) return notVcf(line, "an empty ALT allele (two commas, or a comma at an end)", new JSONObject().setInteger("column", 5));
    const kind = classify(ref, refLength, alt + <usize>start, i - start);
    alleles++;
    mask |= 1 << kind;
    const at = ALLELES_BY_CLASS + (<usize>kind << 3);
    store<i64>(at, load<i64>(at) + 1);
    if (kind == SNV && isBase(snvRef) && isBase(snvAlt)) {
      if (isTransition(snvRef, snvAlt)) transitions++;
      else transversions++;
    }
    start = i + 1;
  }
  records++;
  countChromosome(fieldStart(0), chromLength);
  for (let rest = mask, kind = 0; rest != 0; rest >>= 1, kind++) {
    if ((rest & 1) == 0) continue;
    const at = RECORDS_BY_CLASS + (<usize>kind << 3);
    store<i64>(at, load<i64>(at) + 1);
  }
  if ((mask & ~((1 << REF_LIKE) | (1 << OVERLAP))) == 0) noAlts++;
  if (alleles >= 2) {
    multiallelic++;
    if ((mask & ~(1 << REF_LIKE)) == 1 << SNV) multiallelicSnvs++;
  }
  return null;
}

// Counts a record on its chromosome: a run on one chromosome only bumps `lastCount`, which
// goes into the managed list when the chromosome changes (or at the end).
function countChromosome(name: usize, length: i32): void {
  if (length == lastChromLength && memory.compare(name, lastChrom, <usize>length) == 0) {
    lastCount++;
    return;
  }
  flushChromosome();
  const text = String.UTF8.decodeUnsafe(name, <usize>length);
  let index: i32;
  if (chromIndex.has(text)) {
    index = chromIndex.get(text);
  } else {
    index = chromNames.length;
    chromIndex.set(text, index);
    chromNames.push(text);
    chromCounts.push(0);
  }
  if (length > lastChromCapacity) {
    if (lastChrom != 0) heap.free(lastChrom);
    lastChrom = heap.alloc(<usize>length);
    lastChromCapacity = length;
  }
  memory.copy(lastChrom, name, <usize>length);
  lastChromLength = length;
  lastIndex = index;
  lastCount = 1;
}

function flushChromosome(): void {
  if (lastIndex >= 0) chromCounts[lastIndex] += lastCount;
  lastCount = 0;
}

// @ts-ignore: decorator
@inline function byClass(table: usize, kind: i32): i64 {
  return load<i64>(table + (<usize>kind << 3));
}

function summary(): JSONObject {
  const alleles = new JSONObject()
    .setInteger("snv", byClass(ALLELES_BY_CLASS, SNV))
    .setInteger("mnp", byClass(ALLELES_BY_CLASS, MNP))
    .setInteger("indel", byClass(ALLELES_BY_CLASS, INDEL))
    .setInteger("symbolic", byClass(ALLELES_BY_CLASS, SYMBOLIC))
    .setInteger("other", byClass(ALLELES_BY_CLASS, OTHER))
    .setInteger("overlap", byClass(ALLELES_BY_CLASS, OVERLAP))
    .setInteger("ref", byClass(ALLELES_BY_CLASS, REF_LIKE));
  const listed = min(chromNames.length, MAX_LISTED);
  const perChromosome = new JSONArray();
  for (let i = 0; i < listed; i++) {
    perChromosome.push(new JSONObject().setString("chrom", chromNames[i]).setInteger("records", chromCounts[i]));
  }
  const out = new JSONObject()
    .setString("fileformat", fileformat)
    .setInteger("records", records)
    .setInteger("samples", samples)
    .setInteger("no_alts", noAlts)
    .setInteger("snvs", byClass(RECORDS_BY_CLASS, SNV))
    .setInteger("mnps", byClass(RECORDS_BY_CLASS, MNP))
    .setInteger("indels", byClass(RECORDS_BY_CLASS, INDEL))
    .setInteger("symbolic", byClass(RECORDS_BY_CLASS, SYMBOLIC))
    .setInteger("others", byClass(RECORDS_BY_CLASS, OTHER))
    .setInteger("multiallelic", multiallelic)
    .setInteger("multiallelic_snvs", multiallelicSnvs)
    .set("alleles", alleles)
    .setInteger("transitions", transitions)
    .setInteger("transversions", transversions);
  if (transversions > 0) out.setNumber("ts_tv", <f64>transitions / <f64>transversions);
  else out.setNull("ts_tv");
  return out
    .setInteger("chromosomes", chromNames.length)
    .set("per_chromosome", perChromosome)
    .setBool("per_chromosome_truncated", chromNames.length > MAX_LISTED);
}

function notVcf(at: i64, reason: string, details: JSONObject): Result {
  details.setString("vcf", vcfId).setInteger("line", at);
  return Result.error(ErrorCode.DATA_FORMAT, "not VCF: line " + at.toString() + ": " + reason, FORMAT_HINT, details);
}

// True for one or more ASCII digits.
function isPosition(at: usize, length: i32): bool {
  if (length == 0) return false;
  for (let i = 0; i < length; i++) {
    if (<u32>load<u8>(at + <usize>i) - 0x30 > 9) return false;
  }
  return true;
}

// An excerpt of text for a message: at most `limit` UTF-16 units, without splitting a
// surrogate pair, and an ellipsis when cut.
function clip(text: string, limit: i32): string {
  if (text.length <= limit) return text;
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last < 0xdc00) end--;
  return text.substring(0, end) + "…";
}
