// A test tool that drives the SDK's SeqReader: `mode` "parts" rebuilds every record from the
// parts `next()` delivers (checking their invariants), "records" uses `nextRecord`; both
// return the records and the reader's error, for comparison with a JS reference.

import { ArtifactReader, JSONArray, JSONObject, Result, run, SeqPart, SeqReader } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  const id = changetype<string>(input.getString("artifact"));
  const reader = new SeqReader(new ArtifactReader(id, input.getBool("gzip")));
  const records = new JSONArray();
  if (input.getString("mode") == "records") {
    while (reader.nextRecord()) {
      records.push(new JSONObject()
        .setString("header", reader.header())
        .setString("id", reader.id())
        .setString("sequence", reader.sequence())
        .setString("quality", reader.quality())
        .setInteger("number", reader.records));
    }
  } else {
    let header = "";
    let sequence = "";
    let quality = "";
    let inHeader = false;
    for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
      const text = String.UTF8.decodeUnsafe(reader.partPointer, <usize>reader.partLength);
      if (part == SeqPart.HEADER) {
        if (!inHeader) {
          header = "";
          sequence = "";
          quality = "";
        }
        header += text;
        inHeader = !reader.partEndsLine;
      } else if (part == SeqPart.SEQUENCE) {
        // Sequence and quality parts are never empty; the running lengths match what came.
        if (reader.partLength == 0 || inHeader) return Result.error("S-TOOL-PROBE", "bad sequence part", "");
        sequence += text;
        if (reader.sequenceLength != <i64>String.UTF8.byteLength(sequence)) return Result.error("S-TOOL-PROBE", "sequenceLength is off", "");
      } else if (part == SeqPart.QUALITY) {
        if (reader.partLength == 0) return Result.error("S-TOOL-PROBE", "empty quality part", "");
        quality += text;
      } else if (part == SeqPart.RECORD_END) {
        if (reader.qualityLength != <i64>quality.length) return Result.error("S-TOOL-PROBE", "qualityLength is off", "");
        records.push(new JSONObject()
          .setString("header", header)
          .setString("sequence", sequence)
          .setString("quality", quality)
          .setInteger("number", reader.records));
      }
    }
  }
  const out = new JSONObject().setString("format", reader.formatName).set("records", records);
  if (!reader.ok) {
    const error = reader.toResult("");
    out.setString("error_code", reader.errorCode).setString("error_message", reader.errorMessage);
    const details = reader.errorDetails;
    if (details !== null) out.set("error_details", details);
    if (error.status != "error") return Result.error("S-TOOL-PROBE", "toResult is not an error", "");
  }
  return Result.ok(out);
}
