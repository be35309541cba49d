// A test tool that reads FASTA or FASTQ with SeqReader, for the test that holds the C SDK's
// reader to this one (sdk-guest/c/test/seq-parts.test.ts): `only` restricts the format
// ("FASTA", "FASTQ" or absent), `piece` sets the read size, `mode` "parts" walks next() and
// "records" nextRecord(). It returns every record (header, sequence and quality joined from
// their parts, and the lengths) and the format, or the reader's error.

import { ArtifactReader, JSONArray, JSONObject, Result, run, SeqFormat, SeqPart, SeqReader } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function text(pointer: usize, length: i32): string {
  return String.UTF8.decodeUnsafe(pointer, <usize>length);
}

function handle(input: JSONObject): Result {
  const id = changetype<string>(input.getString("artifact"));
  const only = input.getString("only");
  const format = only == "FASTA" ? SeqFormat.FASTA : only == "FASTQ" ? SeqFormat.FASTQ : SeqFormat.NONE;
  const piece = <i32>input.getInteger("piece", 1 << 20);
  const reader = new SeqReader(new ArtifactReader(id, false, piece), format);
  const records = new JSONArray();
  if (input.getString("mode") == "records") {
    while (reader.nextRecord()) {
      records.push(
        new JSONObject()
          .setString("header", reader.header())
          .setString("id", reader.id())
          .setString("sequence", reader.sequence())
          .setString("quality", reader.quality())
          .setInteger("length", reader.sequenceLength)
          .setInteger("quality_length", reader.qualityLength),
      );
    }
  } else {
    let header = "";
    let sequence = "";
    let quality = "";
    for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
      if (part == SeqPart.HEADER) {
        header += text(reader.partPointer, reader.partLength);
      } else if (part == SeqPart.SEQUENCE) sequence += text(reader.partPointer, reader.partLength);
      else if (part == SeqPart.QUALITY) quality += text(reader.partPointer, reader.partLength);
      else {
        records.push(
          new JSONObject()
            .setString("header", header)
            .setString("sequence", sequence)
            .setString("quality", quality)
            .setInteger("length", reader.sequenceLength)
            .setInteger("quality_length", reader.qualityLength),
        );
        header = "";
        sequence = "";
        quality = "";
      }
    }
  }
  if (!reader.ok) return reader.toResult("reading");
  return Result.ok(new JSONObject().set("records", records).setString("format", reader.formatName));
}
