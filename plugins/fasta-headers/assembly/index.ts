// fasta.headers: lists the records of a FASTA artifact (plain or gzip): each header's id,
// description and sequence length, up to `max_headers` of them, and the record count. An
// Extism plugin (extism/v1, built with @extism/as-pdk): it reads the artifact in pieces through
// Helix's broker host function, so the file may be larger than the plugin's memory.

import { Host } from "@extism/as-pdk";
import { JSONObject, JSONParser, JSONWriter, quote } from "@helix/sdk-as";
import { callCapability, fail, failWithError } from "@helix/sdk-as/extism";

/**
 * Bytes asked of artifact.read per call. A piece lives as the answer's bytes, its UTF-16
 * text and the JSON tree's copy at once, so a quarter of the 1 MiB maximum keeps the peak small.
 */
const PIECE: i64 = 262144;
const DEFAULT_MAX_HEADERS: i64 = 1000;

/** Extism entry (manifest `entrypoint`): 0 with the output set, or 1 with an error set. */
export function headers(): i32 {
  const parsed = new JSONParser(Host.inputString()).parse();
  if (parsed === null || !parsed.isObject) return fail("I-REQ-INPUT", "the input must be a JSON object");
  const input = changetype<JSONObject>(parsed);
  const id = input.getString("fasta");
  if (id === null) return fail("I-REQ-INPUT", "fasta must be an artifact id");
  const lister = new Lister(input.getInteger("max_headers", DEFAULT_MAX_HEADERS));

  const stat = callCapability("artifact.stat", '{"artifact_id":' + quote(id) + "}");
  if (!stat.ok) return failWithError(stat.error);
  const gzip = stat.result !== null && changetype<JSONObject>(stat.result).getString("compression") == "gzip";

  let offset: i64 = 0;
  let carry = "";
  for (;;) {
    const piece = callCapability(
      "artifact.read",
      '{"artifact_id":' + quote(id) + ',"offset":' + offset.toString() + ',"length":' + PIECE.toString() + ',"decompress":' + (gzip ? "true" : "false") + "}",
    );
    if (!piece.ok || piece.result === null) return failWithError(piece.error);
    const result = changetype<JSONObject>(piece.result);
    const data = result.getString("data");
    const eof = result.getBool("eof");
    const text = data === null ? carry : carry + data;
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      if (!lister.line(text.substring(start, nl))) return lister.failure();
      start = nl + 1;
    }
    carry = text.substring(start);
    // A full collection per piece: the incremental collector alone lets megabytes of dead
    // text pile up between pieces faster than it frees them.
    __collect();
    if (eof) break;
    offset = result.getInteger("next_offset");
  }
  if (carry.length > 0 && !lister.line(carry)) return lister.failure();
  const out = String.UTF8.encode(lister.finish());
  Host.output(Uint8Array.wrap(out));
  return 0;
}

/** Collects records line by line; holds one header until its sequence length is known. */
class Lister {
  private records: i64 = 0;
  private lineNo: i64 = 0;
  private pendingId: string | null = null;
  private pendingDescription: string = "";
  private pendingLength: i64 = 0;
  private listed: i64 = 0;
  private badLine: i64 = 0;
  private readonly out: JSONWriter = new JSONWriter(4096);

  constructor(private readonly maxHeaders: i64) {
    this.out.beginObject().key("headers").beginArray();
  }

  /** Takes one line (without its newline); false when the file is not FASTA. */
  line(raw: string): bool {
    this.lineNo++;
    const line = raw.endsWith("\r") ? raw.substring(0, raw.length - 1) : raw;
    if (line.length == 0) return true;
    if (line.charCodeAt(0) == 0x3e) {
      this.flush();
      this.records++;
      const header = line.substring(1);
      let cut = 0;
      while (cut < header.length && !isBlank(header.charCodeAt(cut))) cut++;
      this.pendingId = header.substring(0, cut);
      this.pendingDescription = header.substring(cut).trim();
      this.pendingLength = 0;
      return true;
    }
    if (this.records == 0) {
      this.badLine = this.lineNo;
      return false;
    }
    for (let i = 0; i < line.length; i++) if (!isBlank(line.charCodeAt(i))) this.pendingLength++;
    return true;
  }

  /** The D-DATA-FORMAT error for the first line that is neither a header nor in a record. */
  failure(): i32 {
    const details = new JSONObject().setInteger("line", this.badLine);
    return fail("D-DATA-FORMAT", "line " + this.badLine.toString() + " comes before the first '>' header: this is not FASTA", details);
  }

  /** The output object. */
  finish(): string {
    this.flush();
    this.out.endArray().key("records").integer(this.records).key("truncated").bool(this.records > this.maxHeaders).endObject();
    return this.out.toString();
  }

  private flush(): void {
    const id = this.pendingId;
    if (id === null) return;
    this.pendingId = null;
    if (this.listed >= this.maxHeaders) return;
    this.listed++;
    this.out.beginObject().key("id").string(id).key("description").string(this.pendingDescription).key("length").integer(this.pendingLength).endObject();
  }
}

function isBlank(c: i32): bool {
  return c == 0x20 || c == 0x09;
}

// Abort handler, installed with `--use abort=assembly/index/abortHandler` as the as-pdk README
// describes, so the module does not import env.abort. It traps: continuing after an abort would
// run on broken state; Helix reports the trap as S-TOOL-TRAP.
function abortHandler(message: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  unreachable();
}
