// The tool's code, made by `helix new --lang extism` from the Extism template: an Extism plugin
// (abi extism/v1, built with @extism/as-pdk) that reads a FASTA or FASTQ artifact in pieces,
// counts its records and their total length, and writes each record's id and length as a TSV
// artifact. Capabilities go through Helix's broker host function (`@helix/sdk-as/extism`);
// JSON is @helix/sdk-as's. Replace `run` and `Counter` with your own work.

import { Host } from "@extism/as-pdk";
import { JSONObject, JSONParser, quote } from "@helix/sdk-as";
import { callCapability, fail, failWithError } from "@helix/sdk-as/extism";

// Bytes asked of artifact.read per call, and sent per artifact.write: a piece lives as the
// answer's bytes, its text and the parsed copy at once, so a quarter of the 1 MiB maximum
// keeps the memory peak small.
const PIECE: i64 = 262144;
const HINT =
  "pass FASTA ('>' header lines, each followed by sequence lines) or FASTQ (4-line records: '@' header, sequence, '+' line, quality of the same length), plain or gzip";

/** Extism entry (the manifest's `entrypoint`): 0 with the output set, or 1 with an error set. */
export function run(): i32 {
  // The host has already checked the input against schemas/input.json and that `sequences`
  // names an artifact in its store.
  const input = changetype<JSONObject>(new JSONParser(Host.inputString()).parse());
  const id = input.getString("sequences")!;

  // Each capability call is listed in the manifest's capabilities.allow; a failure is passed
  // on with the host's code (an unknown id, a policy that does not grant the call).
  const stat = callCapability("artifact.stat", '{"artifact_id":' + quote(id) + "}");
  if (!stat.ok) return failWithError(stat.error);
  const gzip = stat.result !== null && changetype<JSONObject>(stat.result).getString("compression") == "gzip";

  const counter = new Counter();
  let offset: i64 = 0;
  let carry = "";
  for (;;) {
    // Gzip is decompressed by the host, so offsets count decompressed bytes.
    const piece = callCapability(
      "artifact.read",
      '{"artifact_id":' + quote(id) + ',"offset":' + offset.toString() + ',"length":' + PIECE.toString() + ',"decompress":' + (gzip ? "true" : "false") + "}",
    );
    if (!piece.ok || piece.result === null) return failWithError(piece.error);
    const result = changetype<JSONObject>(piece.result);
    const data = result.getString("data");
    const text = data === null ? carry : carry + data;
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      if (!counter.line(text.substring(start, nl))) return counter.failure();
      start = nl + 1;
    }
    carry = text.substring(start);
    // A full collection per piece: the incremental collector alone lets dead text pile up.
    __collect();
    if (result.getBool("eof")) break;
    offset = result.getInteger("next_offset");
  }
  if (carry.length > 0 && !counter.line(carry)) return counter.failure();
  if (!counter.finish()) return counter.failure();

  const lengths = counter.lengthsId!;
  const output = new JSONObject()
    .setString("format", counter.format)
    .setInteger("records", counter.records)
    .setInteger("total_length", counter.total)
    .setString("lengths", lengths);
  Host.outputString(output.toString());
  return 0;
}

// Parser states.
const START: i32 = 0; // before the first record: blank lines, then '>' or '@'
const FASTA: i32 = 1; // FASTA sequence lines
const FASTQ_HEADER: i32 = 2; // FASTQ between records: blank lines, then '@'
const FASTQ_SEQUENCE: i32 = 3;
const FASTQ_PLUS: i32 = 4;
const FASTQ_QUALITY: i32 = 5;

/** Takes the file line by line: counts records and lengths, and writes the TSV in pieces. */
class Counter {
  format: string = "";
  records: i64 = 0;
  total: i64 = 0;
  lengthsId: string | null = null;
  private state: i32 = START;
  private lineNo: i64 = 0;
  private id: string | null = null;
  private length: i64 = 0;
  private tsv: string = "id\tlength\n";
  private errorCode: string = "D-DATA-FORMAT";
  private errorMessage: string = "";
  private capabilityError: JSONObject | null = null;

  /** One line without its LF; false when the file is not FASTA or FASTQ (or a write failed). */
  line(raw: string): bool {
    this.lineNo++;
    const line = raw.endsWith("\r") ? raw.substring(0, raw.length - 1) : raw;
    const first = line.length > 0 ? line.charCodeAt(0) : -1;
    switch (this.state) {
      case START:
      case FASTQ_HEADER:
        if (isBlank(line)) return true;
        if (first == 0x3e && this.state == START) {
          this.format = "FASTA";
          return this.begin(line, FASTA);
        }
        if (first == 0x40) {
          this.format = "FASTQ";
          return this.begin(line, FASTQ_SEQUENCE);
        }
        return this.bad(this.state == START ? "expected a header line starting with '>' (FASTA) or '@' (FASTQ)" : "expected a '@' header line");
      case FASTA:
        if (first == 0x3e) return this.end() && this.begin(line, FASTA);
        this.length += String.UTF8.byteLength(line);
        return true;
      case FASTQ_SEQUENCE:
        this.length = String.UTF8.byteLength(line);
        this.state = FASTQ_PLUS;
        return true;
      case FASTQ_PLUS:
        if (first != 0x2b) return this.bad("expected the '+' line of record " + this.records.toString() + " (multi-line FASTQ is not supported)");
        this.state = FASTQ_QUALITY;
        return true;
      default:
        if (String.UTF8.byteLength(line) != this.length) return this.bad("the quality of record " + this.records.toString() + " is not as long as its sequence");
        this.state = FASTQ_HEADER;
        return this.end();
    }
  }

  /** Closes the last record and the TSV; false on a truncated FASTQ record or a failed write. */
  finish(): bool {
    if (this.state == FASTA && !this.end()) return false;
    if (this.state >= FASTQ_SEQUENCE) return this.bad("the data ends inside record " + this.records.toString());
    return this.send(true);
  }

  /** Sets the error: the capability's, or D-DATA-FORMAT naming the line. */
  failure(): i32 {
    if (this.capabilityError !== null) return failWithError(this.capabilityError);
    const details = new JSONObject().setInteger("line", this.lineNo).setInteger("record", this.records).setString("format", this.format);
    return fail(this.errorCode, this.errorMessage, details, HINT);
  }

  private begin(header: string, state: i32): bool {
    this.records++;
    let cut = 1;
    while (cut < header.length && header.charCodeAt(cut) != 0x20 && header.charCodeAt(cut) != 0x09) cut++;
    this.id = header.substring(1, cut);
    this.length = 0;
    this.state = state;
    return true;
  }

  private end(): bool {
    this.total += this.length;
    this.tsv += this.id! + "\t" + this.length.toString() + "\n";
    return this.tsv.length < <i32>PIECE || this.send(false);
  }

  // One artifact.write piece under the declared role `lengths`; the final one names the artifact.
  private send(final: bool): bool {
    const answer = callCapability(
      "artifact.write",
      '{"role":"lengths","type":"tsv","label":"record lengths","encoding":"utf8","final":' + (final ? "true" : "false") + ',"data":' + quote(this.tsv) + "}",
    );
    this.tsv = "";
    if (!answer.ok || answer.result === null) {
      this.capabilityError = answer.error;
      return false;
    }
    if (final) this.lengthsId = changetype<JSONObject>(answer.result).getString("artifact_id");
    return true;
  }

  private bad(reason: string): bool {
    this.errorMessage = "not " + (this.format.length > 0 ? this.format : "FASTA or FASTQ") + ": line " + this.lineNo.toString() + ": " + reason;
    return false;
  }
}

// True for a line of spaces, tabs and CRs only (checked without making a trimmed copy).
function isBlank(line: string): bool {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c != 0x20 && c != 0x09 && c != 0x0d) return false;
  }
  return true;
}

// Abort handler, installed with `--use abort=assembly/index/abortHandler` as the as-pdk README
// describes, so the module does not import env.abort. It traps: continuing after an abort would
// run on broken state; Helix reports the trap as S-TOOL-TRAP.
function abortHandler(message: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  unreachable();
}
