// The tool's code, made by `helix new` from the AssemblyScript template: it reads a FASTA or
// FASTQ artifact with the SDK's streaming reader, counts its records and their total length,
// and writes each record's id and length as a TSV artifact. Replace `handle` with your own work.

import { Artifact, ArtifactReader, ArtifactWriter, JSONObject, Result, run, SeqPart, SeqReader } from "@helix/sdk-as";
// Required: exports the ABI functions and loads the SDK's abort handler.
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point: `run` reads the input, calls `handle` and writes the envelope. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

// The host has already checked the input against schemas/input.json and that `sequences`
// names an artifact in its store, so the field is there and is a string.
function handle(input: JSONObject): Result {
  const id = input.getString("sequences")!;
  // Each capability call is listed in the manifest's capabilities.allow. A failure keeps the
  // host's code and message (an unknown id, a policy that does not grant the call).
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);

  // The reader has the host copy the file into its 1 MiB buffer a piece at a time (gzip is
  // decompressed by the host), so a file far larger than the tool's memory is read while
  // holding one piece.
  const reader = new SeqReader(new ArtifactReader(id, info.isGzip));
  // The output is written under the role declared in the manifest's declaredOutputs.
  const out = new ArtifactWriter("lengths", "tsv", "record lengths");
  out.writeLine("id\tlength");
  let records: i64 = 0;
  let total: i64 = 0;
  // A record's id is its header up to the first space or tab. The header comes in one or more
  // HEADER parts; `inId` is true while the id is still being copied.
  let newRecord = true;
  let inId = false;
  // Parts, not whole records: a record's header and sequence are never held, only counted, and
  // the id goes byte for byte from the reader's buffer to the writer's (no strings per record).
  for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
    if (part == SeqPart.HEADER) {
      if (newRecord) inId = true;
      newRecord = false;
      if (inId) {
        const cut = idLength(reader.partPointer, reader.partLength);
        out.writeUtf8(reader.partPointer, cut);
        if (cut < reader.partLength) inId = false;
      }
    } else if (part == SeqPart.RECORD_END) {
      records++;
      total += reader.sequenceLength;
      out.writeByte(0x09);
      writeDecimal(out, reader.sequenceLength);
      out.writeByte(0x0a);
      newRecord = true;
    }
  }
  // A file that is not FASTA or FASTQ stops the reader with D-DATA-FORMAT naming the line.
  if (!reader.ok) return reader.toResult("reading " + id);
  const lengths = out.finish();
  if (lengths === null) return out.toResult("artifact.write lengths");

  return Result.ok(
    new JSONObject()
      .setString("format", reader.formatName)
      .setInteger("records", records)
      .setInteger("total_length", total)
      .setString("lengths", lengths),
  );
}

// How many of the `length` header bytes at `p` belong to the id: those before the first space or tab.
function idLength(p: usize, length: i32): i32 {
  for (let i = 0; i < length; i++) {
    const c = load<u8>(p + <usize>i);
    if (c == 0x20 || c == 0x09) return i;
  }
  return length;
}

// Room for the digits of any i64.
const DIGITS = memory.data(20);

// Writes `value` (not negative) in decimal without making a string.
function writeDecimal(out: ArtifactWriter, value: i64): void {
  let at: i32 = 20;
  do {
    at--;
    store<u8>(DIGITS + <usize>at, <u8>(0x30 + value % 10));
    value /= 10;
  } while (value > 0);
  out.writeUtf8(DIGITS + <usize>at, 20 - at);
}
