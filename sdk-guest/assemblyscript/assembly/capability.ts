// Synchronous capability calls through the one import helix/v1 allows. The import is declared
// here but only linked into modules that call it: the compiler drops unused declarations.

import { hostCapabilityCallBulk, unpackLength, unpackPointer } from "./abi";
import { OffsetList } from "./json/buffer";
import { JSONParser } from "./json/parser";
import { JSONKind, JSONNull, JSONObject, JSONValue } from "./json/value";
import { JSONWriter } from "./json/writer";

// @ts-ignore: decorator
@external("helix_v1", "capability_call")
declare function hostCapabilityCall(ptr: i32, len: i32): i64;

/**
 * Low-level call: sends `{"abi_version":1,"name":<name>,"args":<argsJson>}` and returns the
 * host's response text unparsed (`{"status":"ok",...,"capability_result":{...}}` or
 * `{"status":"error",...,"error":{...}}`). `argsJson` must be one JSON object; it is not checked.
 */
export function capabilityCall(name: string, argsJson: string): string {
  const packed = send(name, argsJson);
  const responsePtr = unpackPointer(packed);
  const response = String.UTF8.decodeUnsafe(responsePtr, unpackLength(packed));
  // The host wrote the response into a buffer it got from our `alloc`; it is ours to free.
  heap.free(responsePtr);
  return response;
}

// Writes the request, calls the host, and returns its packed response buffer.
function send(name: string, argsJson: string): i64 {
  const writer = new JSONWriter(argsJson.length + name.length + 48);
  writer.beginObject().key("abi_version").integer(1).key("name").string(name).key("args").raw(argsJson).endObject();
  const request = writer.toString();
  const size = <usize>String.UTF8.byteLength(request);
  const buffer = heap.alloc(size);
  String.UTF8.encodeUnsafe(changetype<usize>(request), request.length, buffer);
  const packed = hostCapabilityCall(<i32>buffer, <i32>size);
  heap.free(buffer);
  return packed;
}

// `send` through the bulk import, with the buffer [buf, buf+bufLen) beside the envelope (abi_version 2).
// Apart from `send`, so a module that never calls it never imports capability_call_bulk.
function sendBulk(name: string, argsJson: string, buf: usize, bufLen: i32): i64 {
  const writer = new JSONWriter(argsJson.length + name.length + 48);
  writer.beginObject().key("abi_version").integer(2).key("name").string(name).key("args").raw(argsJson).endObject();
  const request = writer.toString();
  const size = <usize>String.UTF8.byteLength(request);
  const buffer = heap.alloc(size);
  String.UTF8.encodeUnsafe(changetype<usize>(request), request.length, buffer);
  const packed = hostCapabilityCallBulk(<i32>buffer, <i32>size, <i32>buf, bufLen);
  heap.free(buffer);
  return packed;
}

/**
 * Calls `artifact.read` or `artifact.write` through `helix_v1.capability_call_bulk` (capability
 * ABI 2; the manifest must say `capabilities.abiVersion: 2`): a read copies its bytes into
 * [buf, buf+bufLen), a write sends them from there. The envelope carries only the control fields.
 */
export function callCapabilityBulk(name: string, args: JSONObject, buf: usize, bufLen: i32): CapabilityResult {
  return parseResponse(sendBulk(name, args.toString(), buf, bufLen));
}

/** A parsed capability response: `ok` with `result`, or the host's error fields. */
export class CapabilityResult {
  constructor(
    public readonly ok: bool,
    /** The capability's result (JSON null on error). */
    public readonly result: JSONValue,
    /** Taxonomy code of the error, empty on success. */
    public readonly errorCode: string,
    public readonly errorMessage: string,
    public readonly errorHint: string,
    /** The error's `details` object, null on success or when the host sent none. */
    public readonly errorDetails: JSONObject | null = null,
  ) {}
}

/**
 * Calls capability `name` with `args` and parses the response. A response that breaks the
 * ABI's shape aborts, since no tool can recover from a host speaking another protocol.
 */
export function callCapability(name: string, args: JSONObject): CapabilityResult {
  return parseResponse(send(name, args.toString()));
}

/** `callCapability` with the args already serialised: `argsJson` must be one JSON object (not checked). */
export function callCapabilityJson(name: string, argsJson: string): CapabilityResult {
  return parseResponse(send(name, argsJson));
}

/**
 * Lowest level: sends `size` bytes at `request`, which must be the whole UTF-8 request
 * `{"abi_version":1,"name":...,"args":{...}}`, and parses the response. For wrappers that
 * build large requests (artifact.write pieces) straight in memory, without string copies.
 */
export function callCapabilityEncoded(request: usize, size: usize): CapabilityResult {
  return parseResponse(hostCapabilityCall(<i32>request, <i32>size));
}

/**
 * A response whose buffer the caller keeps: the string value under one key is not decoded
 * but unescaped in place, as the `rawLength` UTF-8 bytes at offset `rawStart` of the buffer.
 * For wrappers that stream large payloads (ArtifactReader) without UTF-16 copies. The caller
 * must `free()` it.
 */
export class CapabilityBuffer {
  constructor(
    public readonly result: CapabilityResult,
    /** The response buffer (from the guest's `alloc`). */
    public readonly pointer: usize,
    public readonly length: i32,
    /** Offset of the raw string's UTF-8 bytes in the buffer, -1 when the response had none. */
    public readonly rawStart: i32,
    public readonly rawLength: i32,
  ) {}

  /** Releases the response buffer; the raw bytes are gone afterwards. */
  free(): void {
    heap.free(this.pointer);
  }
}

/**
 * `callCapability`, keeping the response buffer and leaving the string under `rawKey` in
 * place; with `lineFeeds`, the offsets of that string's LFs are recorded there as well.
 */
export function callCapabilityInPlace(name: string, args: JSONObject, rawKey: string, lineFeeds: OffsetList | null = null): CapabilityBuffer {
  const packed = send(name, args.toString());
  const pointer = unpackPointer(packed);
  const length = <i32>unpackLength(packed);
  const parser = JSONParser.fromBytes(pointer, length);
  parser.rawKey = rawKey;
  parser.rawLineFeeds = lineFeeds;
  const result = parseResponseWith(parser);
  return new CapabilityBuffer(result, pointer, length, parser.rawStart, parser.rawLength);
}

function parseResponse(packed: i64): CapabilityResult {
  const responsePtr = unpackPointer(packed);
  // Parsed in place, then freed: the tree holds copies of every string.
  const result = parseResponseWith(JSONParser.fromBytes(responsePtr, <i32>unpackLength(packed)));
  heap.free(responsePtr);
  return result;
}

function parseResponseWith(parser: JSONParser): CapabilityResult {
  const parsed = parser.parse();
  if (parsed === null || parsed.kind != JSONKind.OBJECT) abort("capability_call: the host's response is not a JSON object: " + parser.error);
  const response = changetype<JSONObject>(parsed);
  const status = response.getString("status");
  if (status == "ok") {
    const body = response.getObject("capability_result");
    if (body === null || !body.has("result")) abort("capability_call: ok response without capability_result.result");
    return new CapabilityResult(true, changetype<JSONValue>(changetype<JSONObject>(body).get("result")), "", "", "");
  }
  const error = response.getObject("error");
  if (status != "error" || error === null) abort("capability_call: response status is neither ok nor error");
  const fields = changetype<JSONObject>(error);
  return new CapabilityResult(
    false,
    new JSONNull(),
    orEmpty(fields.getString("code")),
    orEmpty(fields.getString("message")),
    orEmpty(fields.getString("hint")),
    fields.getObject("details"),
  );
}

function orEmpty(text: string | null): string {
  return text !== null ? text : "";
}
