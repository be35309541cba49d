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
  let header = "";
  let records: i64 = 0;
  let total: i64 = 0;
  // Parts, not whole records: a record's sequence is never held, only counted.
  for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
    if (part == SeqPart.HEADER) {
      header += String.UTF8.decodeUnsafe(reader.partPointer, <usize>reader.partLength);
    } else if (part == SeqPart.RECORD_END) {
      records++;
      total += reader.sequenceLength;
      out.writeLine(recordId(header) + "\t" + reader.sequenceLength.toString());
      header = "";
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

// A record's id: its header up to the first space or tab.
function recordId(header: string): string {
  for (let i = 0; i < header.length; i++) {
    const c = header.charCodeAt(i);
    if (c == 0x20 || c == 0x09) return header.substring(0, i);
  }
  return header;
}
