// A test tool that calls capabilities through the helix_v1 import, typed and raw.

import { callCapability, capabilityCall, JSONObject, Result, run } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  const name = input.getString("name");
  if (name === null) return Result.error("I-REQ-INPUT", "name is required", "pass a capability name");
  if (input.getBool("raw")) {
    return Result.okJson("{\"response\":" + capabilityCall(name, "{\"raw\":true}") + "}");
  }
  const args = input.getObject("args");
  const reply = callCapability(name, args !== null ? args : new JSONObject());
  const out = new JSONObject().setBool("ok", reply.ok);
  if (reply.ok) out.set("result", reply.result);
  else out.setString("code", reply.errorCode).setString("message", reply.errorMessage).setString("hint", reply.errorHint);
  return Result.ok(out);
}
