// A test tool that exercises the SDK from inside wasm: the tests pick a behaviour with `mode`.

import {
  CodeUnitBuffer, ErrorCode, JSONArray, JSONObject, JSONParser, JSONValue, JSONWriter, Result, run, stringify,
} from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

// Global on purpose: shows what a reused instance would carry between calls.
let calls: i32 = 0;

function handle(input: JSONObject): Result {
  const mode = input.getString("mode");
  if (mode === null) return Result.error(ErrorCode.INVALID_INPUT, "mode is required", "pass a mode");
  const value = input.get("value");
  if (mode == "echo") return Result.ok(value !== null ? value : new JSONObject());
  if (mode == "reparse") return Result.okJson(stringify(reparse(changetype<JSONValue>(value))));
  if (mode == "parse") return parseText(input.getString("text"), <i32>input.getInteger("max_depth", 128));
  if (mode == "accessors") return accessors(changetype<JSONObject>(input.getObject("value")));
  if (mode == "writer") return writer();
  if (mode == "error") {
    const details = new JSONObject().setString("field", "value").setInteger("position", 7);
    return Result.error(ErrorCode.DATA_FORMAT, "bad \"data\"", "fix the data", details);
  }
  if (mode == "terminal") return Result.capabilityCall("kv.get", new JSONObject().setString("key", "k"));
  if (mode == "bad_code") return Result.error("NOT-A-CODE", "x", "y");
  if (mode == "empty_message") return Result.error(ErrorCode.TOOL_PANIC, "", "y");
  if (mode == "long_error") return Result.error(ErrorCode.TOOL_PANIC, "m".repeat(4094) + "\u{1F600}" + "tail", "h".repeat(5000));
  if (mode == "nan") return Result.ok(new JSONObject().setNumber("x", NaN));
  if (mode == "throw") {
    const detail = input.getString("detail");
    throw new Error("kaboom: " + (detail !== null ? detail : ""));
  }
  if (mode == "bounds") return Result.ok(new JSONArray().pushInteger([1, 2, 3][<i32>input.getInteger("index")]));
  if (mode == "count") {
    calls++;
    return Result.ok(new JSONObject().setInteger("calls", calls));
  }
  if (mode == "churn") return churn(<i32>input.getInteger("rounds"));
  return Result.error(ErrorCode.INVALID_INPUT, "unknown mode " + mode, "see probe.ts");
}

function reparse(value: JSONValue): JSONValue {
  const parser = new JSONParser(stringify(value));
  const again = parser.parse();
  if (again === null) abort("reparse failed: " + parser.error);
  return changetype<JSONValue>(again);
}

function parseText(text: string | null, maxDepth: i32): Result {
  const parser = new JSONParser(text !== null ? text : "", maxDepth);
  const value = parser.parse();
  const out = new JSONObject().setBool("ok", value !== null);
  if (value !== null) out.set("value", value);
  else out.setString("error", parser.error).setInteger("position", parser.position);
  return Result.ok(out);
}

function accessors(object: JSONObject): Result {
  const out = new JSONObject();
  const s = object.getString("s");
  out.set("s", s !== null ? new JSONObject().setString("v", s) : new JSONObject());
  out.setNumber("n", object.getNumber("n", -1));
  out.setInteger("i", object.getInteger("i", -1));
  out.setInteger("i_frac", object.getInteger("f", -1));
  out.setInteger("i_big", object.getInteger("big", -1));
  out.setBool("b", object.getBool("b", false));
  out.setBool("missing_bool", object.getBool("nope", true));
  out.setBool("has_o", object.getObject("o") !== null);
  out.setBool("s_is_not_object", object.getObject("s") === null);
  const list = object.getArray("a");
  out.setInteger("a_len", list !== null ? list.length : -1);
  out.setInteger("a_second", list !== null ? list.getInteger(1, -1) : -2);
  out.setBool("a_out_of_range_is_null", list !== null && list.get(99) === null);
  out.setBool("null_is_value", object.has("z") && changetype<JSONValue>(object.get("z")).isNull);
  const keys = object.keys();
  const keyList = new JSONArray();
  for (let i = 0; i < keys.length; i++) keyList.pushString(keys[i]);
  out.set("keys", keyList);
  return Result.ok(out);
}

function writer(): Result {
  const w = new JSONWriter();
  w.beginObject();
  w.key("empty_object").beginObject().endObject();
  w.key("empty_array").beginArray().endArray();
  w.key("nested").beginArray().integer(1).beginObject().key("k").nullValue().endObject().beginArray().endArray().endArray();
  w.key("numbers").beginArray().number(0.1).number(-0.0).number(1e21).number(1.5e-7).number(-1234.5).integer(-9007199254740991).endArray();
  w.key("text").string("tab\t quote\" slash\\ nul\u0000 bell\u0007 e\u00e9 \ud83d\ude00 lone\ud800");
  w.key("raw").raw("{\"pre\":true}");
  w.key("bools").beginArray().bool(true).bool(false).endArray();
  w.endObject();
  const buffer = new CodeUnitBuffer(1);
  for (let i = 0; i < 1000; i++) buffer.push(0x61);
  return Result.okJson("{\"written\":" + w.toString() + ",\"buffer_length\":" + buffer.toString().length.toString() + "}");
}

// Allocates far more garbage than the memory it ends with, to show the collector runs mid-call.
function churn(rounds: i32): Result {
  let kept = "";
  for (let i = 0; i < rounds; i++) {
    const scratch = new JSONObject().setString("s", "x".repeat(1000)).setInteger("i", i);
    kept = stringify(scratch).substring(0, 8);
  }
  return Result.ok(new JSONObject().setString("kept", kept));
}
