// Helix's broker for an Extism plugin (abi extism/v1) built with @extism/as-pdk: the one host
// function, `extism:host/user.helix_capability_call(offset: u64) -> u64`, which takes the Extism
// memory offset of a request envelope and returns the offset of the response envelope
// (abi/ABI.md, ABI-EXTISM-004), and errors set through `extism_error_set` (ABI-EXTISM-008).
// Packs import it as "@helix/sdk-as/extism". The SDK's index never imports this file, so a
// helix/v1 pack does not need @extism/as-pdk.

import { Memory } from "@extism/as-pdk";
import { error_set, free, length } from "@extism/as-pdk/lib/env";
import { JSONParser } from "./json/parser";
import { JSONObject } from "./json/value";
import { JSONWriter, quote } from "./json/writer";

// @ts-ignore: decorator
@external("extism:host/user", "helix_capability_call")
declare function helixCapabilityCall(offset: u64): u64;

/** A capability's answer: `ok` with `result`, or the error the host sent. */
export class Answer {
  constructor(
    public readonly ok: bool,
    public readonly result: JSONObject | null,
    /** `{"code","message",...}` of an error answer, null on success. */
    public readonly error: JSONObject | null,
  ) {}
}

/**
 * Calls capability `name` with `argsJson` (one JSON object): writes the request envelope into
 * Extism memory, calls the host, and parses the response envelope, which is what
 * `helix_v1.capability_call` answers (ABI-CAP-001). Both blocks are freed (ABI-EXTISM-004).
 */
export function callCapability(name: string, argsJson: string): Answer {
  const request = Memory.allocateString('{"abi_version":1,"name":' + quote(name) + ',"args":' + argsJson + "}");
  const offset = helixCapabilityCall(request.offset);
  request.free();
  const response = new Memory(offset, length(offset));
  const text = response.toString();
  free(offset);
  const envelope = new JSONParser(text).parse();
  if (envelope === null || !envelope.isObject) abort("the host answered with something other than a response envelope");
  const obj = changetype<JSONObject>(envelope);
  if (obj.getString("status") == "ok") {
    const wrapped = obj.getObject("capability_result");
    return new Answer(true, wrapped === null ? null : wrapped.getObject("result"), null);
  }
  return new Answer(false, null, obj.getObject("error"));
}

/**
 * Ends the call with a taxonomy error: sets `{"code","message","details","hint"}` with
 * `extism_error_set`, which Helix reports as the tool's own error (ABI-EXTISM-008), and returns
 * the entry's non-zero result. `details` and `hint` are left out when null or empty.
 */
export function fail(code: string, message: string, details: JSONObject | null = null, hint: string = ""): i32 {
  const w = new JSONWriter(message.length + hint.length + 64);
  w.beginObject().key("code").string(code).key("message").string(message);
  if (details !== null) w.key("details").raw(details.toString());
  if (hint.length > 0) w.key("hint").string(hint);
  w.endObject();
  return failWith(w.toString());
}

/** Passes a capability's error object on as the tool's error (ABI-EXTISM-008). */
export function failWithError(error: JSONObject | null): i32 {
  return error === null ? fail("S-TOOL-TRAP", "the host sent an error without details") : failWith(error.toString());
}

function failWith(json: string): i32 {
  error_set(Memory.allocateString(json).offset);
  return 1;
}
