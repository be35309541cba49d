// seq.revcomp: reverse-complements every record of a FASTA artifact (plain or gzip) into a
// new FASTA artifact, streaming the input line by line and holding one record at a time.
// Logs start and finish, and keeps cumulative usage statistics in its kv namespace.

import { Artifact, ArtifactReader, ArtifactWriter, ErrorCode, JSONObject, Kv, Log, Result, run } from "@helix/sdk-as";
import {
  APPEND_OK, APPEND_TOO_LONG, appendHeader, appendSequence, headerText, MAX_HEADER_BYTES, MAX_RECORD_LENGTH, prepareComplement,
  recordLength, resetRecord, writeRecord,
} from "./record";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

/** The declared output role (manifest `declaredOutputs`). */
const ROLE = "revcomp";
/** Longest artifact label the host accepts. */
const MAX_LABEL_LENGTH: i32 = 200;
const STATS_KEY = "stats";
const FORMAT_HINT = "pass a nucleotide FASTA artifact: '>' header lines, each followed by lines of IUPAC codes (A C G T U R Y S W K M B D H V N, any case; gaps - and .)";

function handle(input: JSONObject): Result {
  // The input schema guarantees a string id; the host has checked it is an artifact id.
  const id = changetype<string>(input.getString("fasta"));
  const fixedWidth = <i32>input.getInteger("line_width", 0);
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);
  Log.info("revcomp.started", new JSONObject()
    .setString("fasta", id)
    .setInteger("size", info.size)
    .setString("compression", info.isGzip ? "gzip" : "none")
    .setString("type", info.type));

  const requested = input.getString("label");
  const sourceLabel = info.label;
  const label = requested !== null ? requested : "reverse complement of " + (sourceLabel !== null ? sourceLabel : id);
  const reader = new ArtifactReader(id, info.isGzip);
  const writer = new ArtifactWriter(ROLE, "fasta", clip(label, MAX_LABEL_LENGTH));
  const converter = new Converter(reader, writer, fixedWidth);
  const failure = converter.run();
  if (failure !== null) return failure;
  const outputId = writer.finish();
  if (outputId === null) return writer.toResult("artifact.write " + ROLE);

  updateStats(converter.records, converter.bases);
  Log.info("revcomp.finished", new JSONObject()
    .setString("revcomp", outputId)
    .setInteger("records", converter.records)
    .setInteger("bases", converter.bases)
    .setInteger("bytes", writer.size));
  return Result.ok(new JSONObject()
    .setString("revcomp", outputId)
    .setInteger("records", converter.records)
    .setInteger("bases", converter.bases));
}

/** Reads FASTA line parts, gathers each record, and writes its reverse complement. */
class Converter {
  records: i64 = 0;
  bases: i64 = 0;
  private line: i64 = 0;
  private column: i32 = 0;
  private lineStart: bool = true;
  private inRecord: bool = false;
  private inHeader: bool = false;
  // Width of the current record's output lines: fixed, or its first sequence line's length.
  private width: i32 = 0;
  private lineBasesStart: i32 = 0;

  constructor(
    private readonly reader: ArtifactReader,
    private readonly writer: ArtifactWriter,
    private readonly fixedWidth: i32,
  ) {
    prepareComplement();
  }

  /** Converts the whole input; null on success, else the error result. */
  run(): Result | null {
    const reader = this.reader;
    // Line parts as bytes, not strings: sequence lines go straight from the piece into the
    // record, and an unwrapped line may be as long as its record.
    while (reader.nextLinePartBytes()) {
      let part = reader.partPointer;
      let length = reader.partLength;
      if (this.lineStart) {
        this.line++;
        this.column = 0;
        this.lineBasesStart = recordLength();
        if (length > 0 && load<u8>(part) == 0x3e) {
          if (this.inRecord && !this.emit()) return this.writer.toResult("artifact.write " + ROLE);
          this.startRecord();
          this.inHeader = true;
          this.column = 1;
          part++;
          length--;
        }
      }
      if (this.inHeader) {
        if (!appendHeader(part, length)) return this.headerTooLong();
      } else if (!this.inRecord) {
        const at = firstNonBlank(part, length);
        if (at >= 0) return this.notFasta(this.column + at, characterAt(part, length, at), "expected a header line starting with '>' before any sequence");
      } else {
        const appended = appendSequence(part, length);
        if (appended == APPEND_TOO_LONG) return this.recordTooLong();
        if (appended != APPEND_OK) {
          const character = characterAt(part, length, appended);
          return this.notFasta(this.column + appended, character, "'" + printable(character) + "' is not a nucleotide code");
        }
      }
      this.endPart(length);
    }
    if (!reader.ok) return reader.toResult("artifact.read " + reader.artifactId);
    if (this.inRecord && !this.emit()) return this.writer.toResult("artifact.write " + ROLE);
    return null;
  }

  private startRecord(): void {
    this.inRecord = true;
    this.records++;
    this.width = this.fixedWidth;
    resetRecord();
    this.lineBasesStart = 0;
  }

  // Bookkeeping after a part: its length, and at a line end the record's width.
  private endPart(units: i32): void {
    this.column += units;
    if (!this.reader.partEndsLine) {
      this.lineStart = false;
      return;
    }
    if (this.inRecord && !this.inHeader && this.width == 0) {
      // Blank lines do not set the width; the first line with bases does.
      this.width = recordLength() - this.lineBasesStart;
    }
    this.inHeader = false;
    this.lineStart = true;
  }

  // Writes the finished record: header with the suffix, then the reversed sequence.
  private emit(): bool {
    this.bases += recordLength();
    return writeRecord(this.writer, this.width);
  }

  private notFasta(columnIndex: i32, character: string, reason: string): Result {
    const column = columnIndex + 1;
    const details = new JSONObject()
      .setString("fasta", this.reader.artifactId)
      .setInteger("line", this.line)
      .setInteger("column", column)
      .setString("character", character);
    const message = "not FASTA: line " + this.line.toString() + ", column " + column.toString() + ": " + reason;
    return Result.error(ErrorCode.DATA_FORMAT, message, FORMAT_HINT, details);
  }

  private headerTooLong(): Result {
    const details = new JSONObject().setInteger("line", this.line).setInteger("max_header_bytes", MAX_HEADER_BYTES);
    return Result.error(ErrorCode.DATA_FORMAT, "not FASTA: the header on line " + this.line.toString() + " is longer than " + MAX_HEADER_BYTES.toString() + " bytes", FORMAT_HINT, details);
  }

  private recordTooLong(): Result {
    const details = new JSONObject()
      .setInteger("record", this.records)
      .setInteger("line", this.line)
      .setInteger("max_record_length", MAX_RECORD_LENGTH)
      .setString("header", clip(headerText(), 200));
    return Result.error(
      "I-REQ-TOO-LARGE",
      "record " + this.records.toString() + " (line " + this.line.toString() + ") is longer than " + MAX_RECORD_LENGTH.toString() + " bases, the most seq.revcomp holds in memory",
      "split the record (for example into contigs or windows) before reverse-complementing it",
      details,
    );
  }
}

// Adds this run to the cumulative statistics. Statistics are a convenience: a failure is
// logged as a warning and does not fail a run whose output is already written.
function updateStats(records: i64, bases: i64): void {
  const previous = Kv.get(STATS_KEY);
  if (previous !== null && !previous.ok) {
    Log.warn("revcomp.stats_failed", new JSONObject().setString("step", "kv.get").setString("code", previous.errorCode));
    return;
  }
  let runs: i64 = 0;
  let totalRecords: i64 = 0;
  let totalBases: i64 = 0;
  if (previous !== null) {
    const stats = previous.object;
    if (stats !== null) {
      runs = stats.getInteger("runs");
      totalRecords = stats.getInteger("records");
      totalBases = stats.getInteger("bases");
    }
  }
  const next = new JSONObject()
    .setInteger("runs", runs + 1)
    .setInteger("records", totalRecords + records)
    .setInteger("bases", totalBases + bases);
  const stored = Kv.put(STATS_KEY, next);
  if (!stored.ok) Log.warn("revcomp.stats_failed", new JSONObject().setString("step", "kv.put").setString("code", stored.errorCode));
}

// Index of the first byte that is not a space, tab or CR, or -1.
function firstNonBlank(part: usize, length: i32): i32 {
  for (let i = 0; i < length; i++) {
    const byte = load<u8>(part + <usize>i);
    if (byte != 0x20 && byte != 0x09 && byte != 0x0d) return i;
  }
  return -1;
}

// The whole UTF-8 character starting at byte `index` of the part, as a string.
function characterAt(part: usize, length: i32, index: i32): string {
  const lead = <u32>load<u8>(part + <usize>index);
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return String.UTF8.decodeUnsafe(part + <usize>index, <usize>min(size, length - index));
}

// Control characters shown as U+XXXX so the message stays one readable line.
function printable(character: string): string {
  const unit = <u32>character.charCodeAt(0);
  if (unit >= 0x20 && unit != 0x7f) return character;
  const digits = "0123456789ABCDEF";
  return "U+00" + digits.charAt((unit >> 4) & 0xf) + digits.charAt(unit & 0xf);
}

// Cuts text to at most `limit` UTF-16 units without splitting a surrogate pair.
function clip(text: string, limit: i32): string {
  if (text.length <= limit) return text;
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last < 0xdc00) end--;
  return text.substring(0, end);
}
