// A test tool around seq.stats' length store (../../assembly/lengths.ts): adds the given
// lengths (or `fill` long ones up to the bound and one more) and returns every k-th length,
// N50 and where adding was refused.

import { JSONArray, JSONObject, Result, run } from "@helix/sdk-as";
import { addLength, kth, MAX_LONG_RECORDS, n50, resetLengths, sortLengths } from "../../assembly/lengths";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  resetLengths();
  const out = new JSONObject().setInteger("max_long_records", MAX_LONG_RECORDS);
  if (input.has("fill")) {
    const length = input.getInteger("fill");
    let added: i64 = 0;
    while (addLength(length + added)) added++;
    return Result.ok(out.setInteger("added", added));
  }
  const lengths = changetype<JSONArray>(input.getArray("lengths"));
  let sum: i64 = 0;
  for (let i = 0; i < lengths.length; i++) {
    const length = lengths.getInteger(i);
    sum += length;
    if (!addLength(length)) return Result.error("S-TOOL-PROBE", "refused", "");
  }
  sortLengths();
  const sorted = new JSONArray();
  for (let i = 0; i < lengths.length; i++) sorted.pushInteger(kth(i));
  out.set("sorted", sorted);
  return Result.ok(out.setInteger("n50", n50(sum)));
}
