// The tool's code, made by `helix new --bare`: it reads the artifact named by `file` through
// the SDK's streaming reader and returns how many bytes and lines it holds. Put your own work
// in `handle`, where the lines are counted.

import { Artifact, ArtifactReader, JSONObject, Result, run } from "@helix/sdk-as";
// Required: exports the ABI functions and loads the SDK's abort handler.
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point: `run` reads the input, calls `handle` and writes the envelope. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

// The host has already checked the input against schemas/input.json and that `file` names an
// artifact in its store, so the field is there and is a string.
function handle(input: JSONObject): Result {
  const id = input.getString("file")!;
  // Each capability call is listed in the manifest's capabilities.allow. A failure keeps the
  // host's code and message (an unknown id, a policy that does not grant the call).
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);

  // The host copies the file into the reader's buffer 1 MiB at a time (gzip decompressed), so
  // a file far larger than the tool's memory is read while holding one piece. Each part is a
  // byte range in that buffer (`partPointer`, `partLength`): scan it in place.
  const reader = new ArtifactReader(id, info.isGzip);
  let lines: i64 = 0;
  while (reader.nextLinePartBytes()) {
    if (reader.partEndsLine) lines++;
  }
  if (!reader.ok) return reader.toResult("reading " + id);

  // At the end the reader's offset is the number of bytes the host handed over.
  return Result.ok(new JSONObject().setInteger("bytes", reader.offset).setInteger("lines", lines));
}
