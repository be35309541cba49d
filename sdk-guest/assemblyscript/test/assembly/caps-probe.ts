// A test tool that drives the typed capability wrappers: the tests pick one with `mode` and
// answer the calls from a simulated host.

import {
  Artifact, ArtifactReader, ArtifactWriter, Base64, CapabilityStatus, Clock, ErrorCode, Http, JSONArray, JSONObject,
  JSONParser, Kv, Log, OffsetList, Result, run, Secrets,
} from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  const mode = input.getString("mode");
  if (mode === null) return Result.error(ErrorCode.INVALID_INPUT, "mode is required", "pass a mode");
  if (mode == "clock") return clock();
  if (mode == "log") return log(input);
  if (mode == "kv") return kv(input);
  if (mode == "stat") return stat(input);
  if (mode == "list") return list(input);
  if (mode == "lines") return lines(input);
  if (mode == "parts") return parts(input);
  if (mode == "pieces") return pieces(input);
  if (mode == "read_all") return readAll(input);
  if (mode == "read_bytes") return readBytes(input);
  if (mode == "write") return write(input);
  if (mode == "write_once") return writeOnce(input);
  if (mode == "http") return http(input);
  if (mode == "secret") return secret(input);
  if (mode == "base64") return base64(input);
  if (mode == "pass_on") return passOn(input);
  if (mode == "part_bytes") return partBytes(input);
  if (mode == "two_readers") return twoReaders(input);
  if (mode == "raw_key") return rawKey(input);
  return Result.error(ErrorCode.INVALID_INPUT, "unknown mode " + mode, "see caps-probe.ts");
}

function str(input: JSONObject, key: string): string {
  const value = input.getString(key);
  return value !== null ? value : "";
}

// The outcome's common fields, for every mode.
function status(out: JSONObject, outcome: CapabilityStatus): JSONObject {
  out.setBool("ok", outcome.ok);
  if (!outcome.ok) {
    out.setString("code", outcome.errorCode).setString("message", outcome.errorMessage).setString("hint", outcome.errorHint);
    const details = outcome.errorDetails;
    if (details !== null) out.set("details", details);
  }
  return out;
}

function clock(): Result {
  const now = Clock.now();
  const out = status(new JSONObject(), now).setInteger("unix_ms", now.unixMs).setInteger("unix_s", now.unixS);
  return Result.ok(out.setInteger("now_ms", Clock.nowUnixMs()));
}

function log(input: JSONObject): Result {
  const fields = input.getObject("fields");
  const results = new JSONArray();
  results.push(status(new JSONObject(), Log.debug("probe.debug")));
  results.push(status(new JSONObject(), Log.info("probe.info", fields)));
  results.push(status(new JSONObject(), Log.warn("probe.warn", fields)));
  results.push(status(new JSONObject(), Log.error(str(input, "event"), fields)));
  return Result.ok(new JSONObject().set("results", results));
}

function kv(input: JSONObject): Result {
  const key = str(input, "key");
  const out = new JSONObject();
  const before = Kv.get(key);
  out.setBool("absent_before", before === null);
  if (before !== null) status(out, before);
  const value = input.get("value");
  out.set("put", status(new JSONObject(), Kv.put(key, value !== null ? value : new JSONObject())));
  const after = Kv.get(key);
  if (after === null) out.setBool("absent_after", true);
  else out.set("after", status(new JSONObject(), after).set("value", after.value).setBool("is_object", after.object !== null));
  const keys = Kv.list(str(input, "prefix"), 10);
  const names = new JSONArray();
  for (let i = 0; i < keys.keys.length; i++) names.pushString(keys.keys[i]);
  out.set("list", status(new JSONObject(), keys).set("keys", names));
  const deleted = Kv.delete(key);
  out.set("delete", status(new JSONObject(), deleted).setBool("deleted", deleted.deleted));
  const again = Kv.delete(key);
  out.setBool("deleted_again", again.deleted);
  out.setBool("absent_at_end", Kv.get(key) === null);
  return Result.ok(out);
}

function stat(input: JSONObject): Result {
  const info = Artifact.stat(str(input, "id"));
  const out = status(new JSONObject(), info);
  out.setString("id", info.id).setString("sha256", info.sha256).setInteger("size", info.size).setString("type", info.type);
  out.setString("compression", info.compression).setBool("is_gzip", info.isGzip).setString("media_type", info.mediaType);
  const label = info.label;
  if (label !== null) out.setString("label", label);
  else out.setNull("label");
  return Result.ok(out.setInteger("created_at", info.createdAt));
}

function list(input: JSONObject): Result {
  const type = input.getString("type");
  const found = Artifact.list(<i32>input.getInteger("limit", 100), type);
  const ids = new JSONArray();
  for (let i = 0; i < found.artifacts.length; i++) ids.pushString(found.artifacts[i].id);
  return Result.ok(status(new JSONObject(), found).set("ids", ids));
}

function reader(input: JSONObject): ArtifactReader {
  const reader = new ArtifactReader(str(input, "id"), input.getBool("decompress"), <i32>input.getInteger("piece_length", 1024 * 1024));
  const max = input.getInteger("max_line_length", 0);
  if (max > 0) reader.maxLineLength = <i32>max;
  return reader;
}

function readerStatus(reader: ArtifactReader, out: JSONObject): JSONObject {
  return status(out, reader).setInteger("line_number", reader.lineNumber).setInteger("pieces", reader.pieces).setBool("done", reader.done);
}

function lines(input: JSONObject): Result {
  const r = reader(input);
  const found = new JSONArray();
  for (let line = r.nextLine(); line !== null; line = r.nextLine()) found.pushString(line);
  return Result.ok(readerStatus(r, new JSONObject()).set("lines", found));
}

function parts(input: JSONObject): Result {
  const r = reader(input);
  const found = new JSONArray();
  for (let part = r.nextLinePart(); part !== null; part = r.nextLinePart()) {
    found.push(new JSONArray().pushString(part).pushBool(r.partEndsLine));
  }
  return Result.ok(readerStatus(r, new JSONObject()).set("parts", found));
}

function pieces(input: JSONObject): Result {
  const r = reader(input);
  const found = new JSONArray();
  for (let piece = r.nextPiece(); piece !== null; piece = r.nextPiece()) found.pushString(piece);
  return Result.ok(readerStatus(r, new JSONObject()).set("pieces_text", found));
}

function readAll(input: JSONObject): Result {
  const r = reader(input);
  const text = r.readAll(input.getInteger("max_bytes", 4 * 1024 * 1024));
  const out = readerStatus(r, new JSONObject());
  if (text !== null) out.setString("text", text);
  return Result.ok(out);
}

function readBytes(input: JSONObject): Result {
  const piece = Artifact.readBytes(str(input, "id"), input.getInteger("offset"), <i32>input.getInteger("length", 1024 * 1024));
  const bytes = new JSONArray();
  for (let i = 0; i < piece.bytes.length; i++) bytes.pushInteger(piece.bytes[i]);
  const out = status(new JSONObject(), piece).set("bytes", bytes);
  return Result.ok(out.setInteger("next_offset", piece.nextOffset).setBool("eof", piece.eof));
}

// Writes `chunks` (strings, or arrays of byte values in base64 mode) and finishes.
function write(input: JSONObject): Result {
  const writer = new ArtifactWriter(str(input, "role"), str(input, "type"), str(input, "label"),
    <i32>input.getInteger("piece_bytes", 512 * 1024), input.getBool("binary") ? "base64" : "utf8");
  const chunks = input.getArray("chunks");
  let ok = true;
  if (chunks !== null) {
    for (let i = 0; i < chunks.length && ok; i++) {
      const text = chunks.getString(i);
      if (text !== null) {
        ok = input.getBool("lines") ? writer.writeLine(text) : writer.write(text);
        continue;
      }
      const values = chunks.getArray(i);
      if (values === null) continue;
      const bytes = new Uint8Array(values.length);
      for (let k = 0; k < values.length; k++) bytes[k] = <u8>values.getInteger(k);
      ok = writer.writeBytes(bytes);
    }
  }
  const id = ok ? writer.finish() : null;
  const out = status(new JSONObject(), writer).setInteger("pieces_sent", writer.piecesSent).setBool("finished", writer.finished);
  if (id !== null) out.setString("artifact_id", id).setString("sha256", writer.sha256).setInteger("size", writer.size);
  out.setBool("write_after_finish", writer.write("x"));
  return Result.ok(out);
}

function writeOnce(input: JSONObject): Result {
  const written = Artifact.write(str(input, "role"), str(input, "data"), true, "text", null);
  const out = status(new JSONObject(), written).setString("role", written.role);
  const id = written.artifactId;
  if (id !== null) out.setString("artifact_id", id);
  return Result.ok(out);
}

function http(input: JSONObject): Result {
  const body = input.getString("body");
  const response = Http.request(str(input, "method"), str(input, "url"), input.getObject("headers"), body,
    input.getBool("binary") ? "base64" : "utf8", input.getInteger("max_response_bytes"));
  const out = status(new JSONObject(), response).setInteger("status", response.status).setString("body", response.body);
  out.setString("body_encoding", response.bodyEncoding).setBool("success", response.success).setString("url", response.url);
  const type = response.header("Content-Type");
  if (type !== null) out.setString("content_type", type);
  const bytes = response.bodyBytes();
  out.setInteger("body_bytes", bytes !== null ? bytes.length : -1);
  return Result.ok(out);
}

function secret(input: JSONObject): Result {
  const value = Secrets.get(str(input, "name"));
  return Result.ok(status(new JSONObject(), value).setString("value", value.value));
}

function base64(input: JSONObject): Result {
  const text = str(input, "text");
  const encoded = Base64.encode(Uint8Array.wrap(String.UTF8.encode(text)));
  const out = new JSONObject().setString("encoded", encoded);
  const decoded = Base64.decode(str(input, "decode"));
  if (decoded === null) out.setNull("decoded");
  else {
    const bytes = new JSONArray();
    for (let i = 0; i < decoded.length; i++) bytes.pushInteger(decoded[i]);
    out.set("decoded", bytes);
  }
  return Result.ok(out);
}

// A failed call turned into the tool's own error envelope.
function passOn(input: JSONObject): Result {
  const info = Artifact.stat(str(input, "id"));
  if (!info.ok) return info.toResult("reading the input");
  return Result.ok(new JSONObject().setString("id", info.id));
}

// Line parts through the byte-level API, decoded here only to report them.
function partBytes(input: JSONObject): Result {
  const r = reader(input);
  const found = new JSONArray();
  while (r.nextLinePartBytes()) {
    found.push(new JSONArray().pushString(String.UTF8.decodeUnsafe(r.partPointer, <usize>r.partLength)).pushBool(r.partEndsLine));
  }
  return Result.ok(readerStatus(r, new JSONObject()).set("parts", found));
}

// Two readers in turns, a part each (`id` and `other`): each fetch rewrites the LF list the
// readers share, so the other reader must find its line ends by scanning.
function twoReaders(input: JSONObject): Result {
  const first = new LineCollector(reader(input));
  const second = new LineCollector(new ArtifactReader(str(input, "other"), false, <i32>input.getInteger("piece_length", 1024 * 1024)));
  while (first.step() | second.step()) {}
  const out = readerStatus(first.reader, new JSONObject()).set("lines", first.lines).set("other_lines", second.lines);
  return Result.ok(out.setBool("other_ok", second.reader.ok).setBool("other_done", second.reader.done));
}

// Gathers a reader's lines from its byte-level parts, one part per step.
class LineCollector {
  readonly lines: JSONArray = new JSONArray();
  private line: string = "";

  constructor(readonly reader: ArtifactReader) {}

  step(): bool {
    const r = this.reader;
    if (!r.nextLinePartBytes()) return false;
    this.line += String.UTF8.decodeUnsafe(r.partPointer, <usize>r.partLength);
    if (r.partEndsLine) {
      this.lines.pushString(this.line);
      this.line = "";
    }
    return true;
  }
}

// Parses `text` with rawKey "data": the parsed value, and the raw string's bytes as text;
// with `feeds`, also the LF offsets the parser recorded (`line_feeds`).
function rawKey(input: JSONObject): Result {
  const bytes = String.UTF8.encode(str(input, "text"));
  const parser = JSONParser.fromBytes(changetype<usize>(bytes), bytes.byteLength);
  parser.rawKey = "data";
  const feeds = input.getBool("feeds") ? new OffsetList() : null;
  parser.rawLineFeeds = feeds;
  const value = parser.parse();
  const out = new JSONObject();
  if (value === null) return Result.ok(out.setString("error", parser.error).setInteger("position", parser.position));
  out.set("value", value).setInteger("raw_start", parser.rawStart);
  if (parser.rawStart >= 0) out.setString("raw", String.UTF8.decodeUnsafe(changetype<usize>(bytes) + <usize>parser.rawStart, <usize>parser.rawLength));
  if (feeds !== null) {
    const offsets = new JSONArray();
    for (let i = 0; i < feeds.length; i++) offsets.pushInteger(feeds.at(i));
    out.set("line_feeds", offsets);
    feeds.free();
  }
  return Result.ok(out);
}
