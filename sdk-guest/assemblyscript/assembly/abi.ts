// The helix/v1 guest side of the call: `alloc`/`dealloc` exports, pointer packing, and `run`,
// which turns a tool's `execute` export into one line around a plain handler function.

import { JSONObject } from "./json/value";
import { JSONParser } from "./json/parser";
import { ErrorCode, Result } from "./result";

/**
 * Largest buffer `capability_call_bulk` takes, in bytes (4 MiB): the most one bulk read copies
 * into guest memory or one bulk write sends (ABI-BULK-003).
 */
export const BULK_MAX_PIECE: i32 = 4 << 20;

/**
 * `helix_v1.capability_call_bulk` (capability ABI 2): the request envelope at `reqPtr`, and a
 * buffer that an `artifact.read` fills with raw bytes or an `artifact.write` sends; returns the
 * packed answer envelope as `capability_call` does. A module that calls it must say
 * `capabilities.abiVersion: 2` in its manifest; the compiler links it only into modules that do.
 */
// @ts-ignore: decorator
@external("helix_v1", "capability_call_bulk")
export declare function hostCapabilityCallBulk(reqPtr: i32, reqLen: i32, bufPtr: i32, bufLen: i32): i64;

/** A tool's logic: receives the parsed input object, returns a result. Must be a top-level function. */
export type Handler = (input: JSONObject) => Result;

/** ABI export `alloc(len) -> ptr`: a buffer the host fills (input) or the guest fills (output). */
export function alloc(len: i32): i32 {
  return <i32>heap.alloc(<usize>len);
}

/** ABI export `dealloc(ptr, len)`: frees a buffer from `alloc`; the allocator knows the size. */
export function dealloc(ptr: i32, len: i32): void {
  heap.free(<usize>ptr);
}

/** Packs a pointer and length the way `execute` and `capability_call` return them: `(ptr << 32) | len`. */
export function packPointer(ptr: usize, len: usize): i64 {
  return (<i64>ptr << 32) | <i64>(<u32>len);
}

/** Pointer half of a packed value. */
export function unpackPointer(packed: i64): usize {
  return <usize>(<u64>packed >>> 32);
}

/** Length half of a packed value. */
export function unpackLength(packed: i64): usize {
  return <usize>(<u32>(packed & 0xffffffff));
}

/** Copies `text` as UTF-8 into a fresh `alloc` buffer and returns it packed, for the host to read and free. */
export function writeOutput(text: string): i64 {
  const size = <usize>String.UTF8.byteLength(text);
  const out = heap.alloc(size);
  String.UTF8.encodeUnsafe(changetype<usize>(text), text.length, out);
  return packPointer(out, size);
}

/** Reads `len` UTF-8 bytes at `ptr` as a string, for an `execute` that skips `run`. */
export function readInput(ptr: i32, len: i32): string {
  return String.UTF8.decodeUnsafe(<usize>ptr, <usize>len);
}

/**
 * The body of a tool's `execute` export: parses the input, calls `handler`, and
 * writes the result's envelope. Input that is not a JSON object ends as an `I-REQ-INPUT`
 * envelope; an abort inside the handler traps, and the host reads the message via `helix_panic`.
 *
 *     export function execute(ptr: i32, len: i32): i64 { return run(ptr, len, handle); }
 */
export function run(ptr: i32, len: i32, handler: Handler): i64 {
  // Parsed straight from the host's buffer; every string in the tree is a copy, so nothing
  // points into the buffer after the host frees it.
  const parser = JSONParser.fromBytes(<usize>ptr, len);
  const input = parser.parse();
  let result: Result;
  if (input === null) {
    result = Result.error(
      ErrorCode.INVALID_INPUT,
      "input is not valid JSON: " + parser.error + " at offset " + parser.position.toString(),
      "send the tool's parameters as one JSON object",
    );
  } else if (!input.isObject) {
    result = Result.error(ErrorCode.INVALID_INPUT, "input must be a JSON object", "send the tool's parameters as one JSON object");
  } else {
    result = handler(changetype<JSONObject>(input));
  }
  return writeOutput(result.envelope);
}
