// @helix/sdk-as: the AssemblyScript guest SDK for helix/v1 tools. A tool's entry file
// re-exports the ABI functions and turns `execute` into one line around a handler:
//
//   import { JSONObject, Result, run } from "@helix/sdk-as";
//   export { alloc, dealloc, helix_panic } from "@helix/sdk-as";
//   export function execute(ptr: i32, len: i32): i64 { return run(ptr, len, handle); }
//   function handle(input: JSONObject): Result { return Result.ok(input); }

export { alloc, BULK_MAX_PIECE, dealloc, Handler, hostCapabilityCallBulk, packPointer, readInput, run, unpackLength, unpackPointer, writeOutput } from "./abi";
export { helix_panic, PANIC_CAPACITY } from "./panic";
export { ErrorCode, isTaxonomyCode, Result } from "./result";
export {
  CapabilityBuffer, CapabilityResult, callCapability, callCapabilityBulk, callCapabilityEncoded, callCapabilityInPlace, callCapabilityJson, capabilityCall,
} from "./capability";
export { Base64 } from "./base64";
export { badResult, CAPABILITY_REQUEST_CODE, CapabilityStatus } from "./caps/status";
export { Clock, ClockTime } from "./caps/clock";
export { Log } from "./caps/log";
export { Kv, KvDeleted, KvKeys, KvValue } from "./caps/kv";
export {
  Artifact, artifactReadInto, ArtifactBytes, ArtifactInfo, ArtifactList, ARTIFACT_MAX_PIECE, ArtifactPiece, artifactWriteFrom, ArtifactWritten, BulkRead,
} from "./caps/artifact";
export { ArtifactReader, DEFAULT_MAX_LINE_LENGTH } from "./caps/artifact-reader";
export { ArtifactWriter, WRITE_PIECE_BYTES } from "./caps/artifact-writer";
export { Http, HttpResponse } from "./caps/http";
export { Secrets, SecretValue } from "./caps/secrets";
export {
  clipText, DEFAULT_MAX_RECORD_BYTES, MAX_ARTIFACT_LABEL_LENGTH, MAX_SEQ_HEADER_BYTES, outputLabel, SEQ_FORMAT_HINT, SeqFormat, SeqPart, SeqReader,
} from "./bio/index";
export { CodeUnitBuffer, OffsetList } from "./json/buffer";
export {
  JSONArray, JSONBool, JSONKind, JSONNull, JSONNumber, JSONObject, JSONString, JSONValue, MAX_SAFE_INTEGER, stringify,
} from "./json/value";
export { DEFAULT_MAX_DEPTH, JSONParser, parse, tryParse } from "./json/parser";
export { JSONWritable, JSONWriter, quote } from "./json/writer";
