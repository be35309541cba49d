// What a tool's handler returns, and the helix/v1 output envelope each result becomes:
// `{"status":"ok",...}`, `{"status":"error",...}` or a terminal `{"status":"capability_call",...}`.

import { JSONObject, JSONValue } from "./json/value";
import { JSONWriter } from "./json/writer";

/** Error codes guests use most; any CLASS-SUBCODE code of the taxonomy is accepted. */
export namespace ErrorCode {
  /** Input the tool cannot use (the host has already checked it against the JSON Schema). */
  export const INVALID_INPUT = "I-REQ-INPUT";
  /** The tool hit an internal fault it chose to report instead of trapping. */
  export const TOOL_PANIC = "S-TOOL-PANIC";
  /** Data (input content, a capability result) is not in the format the tool expects. */
  export const DATA_FORMAT = "D-DATA-FORMAT";
}

// The error classes of the taxonomy (abi/ABI.md, "Error taxonomy").
const ERROR_CLASSES: StaticArray<string> = [
  "I-REQ-", "A-AUTH-", "P-PRECOND-", "R-TIMEOUT-", "R-UPSTREAM-", "R-CAP-", "S-TOOL-", "C-CONTRACT-", "D-DATA-",
];

/**
 * A finished tool result, already serialised as its envelope. Build one with `Result.ok`,
 * `Result.okJson`, `Result.error` or `Result.capabilityCall`.
 */
export class Result {
  constructor(
    /** "ok", "error" or "capability_call". */
    public readonly status: string,
    /** The complete envelope JSON text. */
    public readonly envelope: string,
  ) {}

  /** Success: `{"status":"ok","output":<value>}`. */
  static ok(value: JSONValue): Result {
    const writer = new JSONWriter();
    writer.beginObject().key("status").string("ok").key("output").value(value).endObject();
    return new Result("ok", writer.toString());
  }

  /** Success with output text the tool has already serialised; the text is trusted as one JSON value. */
  static okJson(outputJson: string): Result {
    const writer = new JSONWriter(outputJson.length + 32);
    writer.beginObject().key("status").string("ok").key("output").raw(outputJson).endObject();
    return new Result("ok", writer.toString());
  }

  /**
   * Failure: `{"status":"error","error":{"code","message","details","hint"}}`. `code` must be a
   * taxonomy code such as `I-REQ-INPUT` (see `ErrorCode`); anything else aborts, since it is a
   * bug in the tool. `hint` tells the caller how to fix the request.
   */
  static error(code: string, message: string, hint: string, details: JSONObject | null = null): Result {
    if (!isTaxonomyCode(code)) abort("Result.error: '" + code + "' is not a taxonomy code (CLASS-SUBCODE, e.g. I-REQ-INPUT)");
    if (message.length == 0) abort("Result.error: the message must not be empty");
    const writer = new JSONWriter();
    writer.beginObject().key("status").string("error").key("error").beginObject();
    writer.key("code").string(code).key("message").string(clip(message));
    writer.key("details").value(details !== null ? details : new JSONObject());
    writer.key("hint").string(clip(hint));
    writer.endObject().endObject();
    return new Result("error", writer.toString());
  }

  /**
   * A terminal capability call: the host performs `name(args)` and its result becomes the
   * tool's output. For calls whose result the tool needs, use `callCapability` instead.
   */
  static capabilityCall(name: string, args: JSONObject): Result {
    const writer = new JSONWriter();
    writer.beginObject().key("status").string("capability_call").key("abi_version").integer(1);
    writer.key("capability_call").beginObject().key("name").string(name).key("args").value(args).endObject();
    writer.endObject();
    return new Result("capability_call", writer.toString());
  }

  get isOk(): bool {
    return this.status == "ok";
  }
}

/** Longest message or hint the host accepts, in characters. */
export const MAX_MESSAGE_LENGTH: i32 = 4096;

// Cuts text the host would refuse as too long, ending it with an ellipsis; never splits a
// surrogate pair, so the cut text is still well-formed.
function clip(text: string): string {
  if (text.length <= MAX_MESSAGE_LENGTH) return text;
  let end = MAX_MESSAGE_LENGTH - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last < 0xdc00) end--;
  return text.substring(0, end) + "\u2026";
}

/** True for `CLASS-SUBCODE` codes of the taxonomy: a known class, then upper-case letters, digits and dashes. */
export function isTaxonomyCode(code: string): bool {
  for (let i = 0; i < ERROR_CLASSES.length; i++) {
    const prefix = unchecked(ERROR_CLASSES[i]);
    if (!code.startsWith(prefix) || code.length == prefix.length) continue;
    let previous: u32 = 0x2d;
    for (let j = prefix.length; j < code.length; j++) {
      const unit = <u32>code.charCodeAt(j);
      const valid = (unit >= 0x41 && unit <= 0x5a) || (unit >= 0x30 && unit <= 0x39) || (unit == 0x2d && previous != 0x2d);
      if (!valid) return false;
      previous = unit;
    }
    return previous != 0x2d;
  }
  return false;
}
