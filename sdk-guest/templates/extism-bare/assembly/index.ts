// The tool's code, made by `helix new --bare --lang extism`: an Extism plugin (abi extism/v1,
// built with @extism/as-pdk) that reads the artifact named by `file` in pieces and returns how
// many bytes and lines it holds. Capabilities go through Helix's broker host function
// (`@helix/sdk-as/extism`); JSON is @helix/sdk-as's. Put your own work in `run`, where each
// piece is counted.

import { Host } from "@extism/as-pdk";
import { JSONObject, JSONParser, quote } from "@helix/sdk-as";
import { callCapability, failWithError } from "@helix/sdk-as/extism";

// Bytes asked of artifact.read per call: a piece lives as the answer's bytes, its text and the
// parsed copy at once, so a quarter of the 1 MiB maximum keeps the memory peak small.
const PIECE: i64 = 262144;

/** Extism entry (the manifest's `entrypoint`): 0 with the output set, or 1 with an error set. */
export function run(): i32 {
  // The host has already checked the input against schemas/input.json and that `file` names
  // an artifact in its store.
  const input = changetype<JSONObject>(new JSONParser(Host.inputString()).parse());
  const id = input.getString("file")!;

  // Each capability call is listed in the manifest's capabilities.allow; a failure is passed
  // on with the host's code (an unknown id, a policy that does not grant the call).
  const stat = callCapability("artifact.stat", '{"artifact_id":' + quote(id) + "}");
  if (!stat.ok) return failWithError(stat.error);
  const gzip = stat.result !== null && changetype<JSONObject>(stat.result).getString("compression") == "gzip";

  let bytes: i64 = 0;
  let lines: i64 = 0;
  let last: i32 = 0x0a;
  let offset: i64 = 0;
  for (;;) {
    // Gzip is decompressed by the host, so offsets count decompressed bytes.
    const piece = callCapability(
      "artifact.read",
      '{"artifact_id":' + quote(id) + ',"offset":' + offset.toString() + ',"length":' + PIECE.toString() + ',"decompress":' + (gzip ? "true" : "false") + "}",
    );
    if (!piece.ok || piece.result === null) return failWithError(piece.error);
    const result = changetype<JSONObject>(piece.result);
    const data = result.getString("data");
    if (data !== null && data.length > 0) {
      for (let i = 0; i < data.length; i++) if (data.charCodeAt(i) == 0x0a) lines++;
      last = data.charCodeAt(data.length - 1);
    }
    // A full collection per piece: the incremental collector alone lets dead text pile up.
    __collect();
    if (result.getBool("eof")) {
      bytes = result.getInteger("next_offset");
      break;
    }
    offset = result.getInteger("next_offset");
  }
  // A last line without a line end counts too.
  if (last != 0x0a) lines++;

  Host.outputString(new JSONObject().setInteger("bytes", bytes).setInteger("lines", lines).toString());
  return 0;
}

// Abort handler, installed with `--use abort=assembly/index/abortHandler` as the as-pdk README
// describes, so the module does not import env.abort. It traps: continuing after an abort would
// run on broken state; Helix reports the trap as S-TOOL-TRAP.
function abortHandler(message: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  unreachable();
}
