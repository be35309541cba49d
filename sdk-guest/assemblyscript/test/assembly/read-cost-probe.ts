// A test tool that reads an artifact the way the bundled tools do and does almost nothing
// else, so the fuel it spends is the reading's: `mode` "count" only counts lines, "parts" walks ArtifactReader line
// parts (bytes), "lines" takes whole lines as strings, "tabs" walks line parts and counts
// tabs, "seq" walks SeqReader parts, "records" takes SeqReader's whole records. It returns counts and `sum`, the first plus the last
// byte of every non-empty line (FASTA/FASTQ: of every record's sequence), for checking against
// a JS reference: cheap next to the reading, yet it moves when a part's bounds are off, and it
// does not depend on where the pieces split.

import { ArtifactReader, JSONObject, Result, run, SeqPart, SeqReader } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  const id = changetype<string>(input.getString("artifact"));
  const mode = input.getString("mode");
  const source = new ArtifactReader(id, input.getBool("gzip"));
  const out = new JSONObject();
  let lines: i64 = 0;
  let bytes: i64 = 0;
  let sum: i64 = 0;
  if (mode == "count") {
    // The reader alone: no byte of a part is looked at.
    while (source.nextLinePartBytes()) if (source.partEndsLine) lines++;
  } else if (mode == "parts" || mode == "tabs") {
    let tabs: i64 = 0;
    const countTabs = mode == "tabs";
    let lineBytes = 0;
    let last: i64 = 0;
    while (source.nextLinePartBytes()) {
      const p = source.partPointer;
      const n = source.partLength;
      if (n > 0) {
        if (lineBytes == 0) sum += <i64>load<u8>(p);
        last = <i64>load<u8>(p + <usize>(n - 1));
        lineBytes += n;
      }
      if (countTabs) for (let i = 0; i < n; i++) if (load<u8>(p + <usize>i) == 0x09) tabs++;
      if (source.partEndsLine) {
        lines++;
        bytes += lineBytes;
        if (lineBytes > 0) sum += last;
        lineBytes = 0;
      }
    }
    out.setInteger("tabs", tabs);
  } else if (mode == "lines") {
    for (let line = source.nextLine(); line !== null; line = source.nextLine()) {
      lines++;
      bytes += line.length;
    }
  } else if (mode == "records") {
    // Whole records, sequence and quality kept.
    const reader = new SeqReader(source);
    let records: i64 = 0;
    let sequence: i64 = 0;
    let quality: i64 = 0;
    while (reader.nextRecord()) {
      records++;
      sequence += reader.sequenceLength;
      quality += reader.qualityLength;
      if (reader.sequenceLength > 0) {
        sum += <i64>load<u8>(reader.sequencePointer) + <i64>load<u8>(reader.sequencePointer + <usize>(reader.sequenceLength - 1));
      }
    }
    if (!reader.ok) return reader.toResult("reading " + id);
    out.setInteger("records", records).setInteger("sequence", sequence).setInteger("quality", quality);
  } else {
    const reader = new SeqReader(source);
    let records: i64 = 0;
    let sequence: i64 = 0;
    let quality: i64 = 0;
    let last: i64 = 0;
    for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
      if (part == SeqPart.SEQUENCE) {
        if (reader.sequenceLength == <i64>reader.partLength) sum += <i64>load<u8>(reader.partPointer);
        last = <i64>load<u8>(reader.partPointer + <usize>(reader.partLength - 1));
      } else if (part == SeqPart.RECORD_END) {
        if (reader.sequenceLength > 0) sum += last;
        records++;
        sequence += reader.sequenceLength;
        quality += reader.qualityLength;
      }
    }
    if (!reader.ok) return reader.toResult("reading " + id);
    out.setInteger("records", records).setInteger("sequence", sequence).setInteger("quality", quality);
  }
  if (!source.ok) return source.toResult("reading " + id);
  return Result.ok(out.setInteger("lines", lines).setInteger("bytes", bytes).setInteger("sum", sum));
}
