// Streaming writes of one output artifact: text (or bytes) is buffered and sent as
// `artifact.write` pieces of about 512 KiB, built straight in memory as UTF-8 request bytes,
// so a tool can write a 100 MB output with a fixed, small amount of memory.

import { Base64 } from "../base64";
import { callCapabilityEncoded } from "../capability";
import { encodeUtf8, findJsonSpecial } from "../json/buffer";
import { quote } from "../json/writer";
import { ErrorCode } from "../result";
import { ARTIFACT_MAX_PIECE, ArtifactWritten, readWritten } from "./artifact";
import { CapabilityStatus } from "./status";

/** Default piece size of ArtifactWriter, in bytes of the encoded piece data (512 KiB). */
export const WRITE_PIECE_BYTES: i32 = 512 * 1024;

// Room past the piece size: a character is always written whole (an escape is at most 6
// bytes, a character 4), and the check for a full piece comes before each character.
const SLACK: i32 = 16;

// JSON escaping per ASCII byte: 0 copies the byte, 1 writes a two-character escape from
// ESCAPE_LETTER, 2 a \u00XX escape.
const ESCAPE_KIND: usize = memory.data(128);
const ESCAPE_LETTER: usize = memory.data(128);
let tablesReady: bool = false;

function prepareTables(): void {
  if (tablesReady) return;
  memory.fill(ESCAPE_KIND, 0, 128);
  memory.fill(ESCAPE_KIND, 2, 0x20);
  store<u8>(ESCAPE_KIND + 0x22, 1);
  store<u8>(ESCAPE_LETTER + 0x22, 0x22);
  store<u8>(ESCAPE_KIND + 0x5c, 1);
  store<u8>(ESCAPE_LETTER + 0x5c, 0x5c);
  store<u8>(ESCAPE_KIND + 0x08, 1);
  store<u8>(ESCAPE_LETTER + 0x08, 0x62);
  store<u8>(ESCAPE_KIND + 0x0c, 1);
  store<u8>(ESCAPE_LETTER + 0x0c, 0x66);
  store<u8>(ESCAPE_KIND + 0x0a, 1);
  store<u8>(ESCAPE_LETTER + 0x0a, 0x6e);
  store<u8>(ESCAPE_KIND + 0x0d, 1);
  store<u8>(ESCAPE_LETTER + 0x0d, 0x72);
  store<u8>(ESCAPE_KIND + 0x09, 1);
  store<u8>(ESCAPE_LETTER + 0x09, 0x74);
  tablesReady = true;
}

/**
 * Writes one output artifact under a role the manifest declares (`declaredOutputs`). Text is
 * buffered and sent in pieces of about `pieceBytes`; `finish()` sends the last piece with
 * `final` and returns the new artifact's id. On a failed piece the writer holds the error
 * (`ok` false) and every later call returns false / null.
 *
 *     const out = new ArtifactWriter("report", "text", "summary");
 *     out.writeLine("hello");
 *     const id = out.finish();
 *     if (id === null) return out.toResult("writing the report");
 *
 * In `utf8` mode (the default) the artifact's bytes are the UTF-8 of the text written; in
 * `base64` mode the buffer holds raw bytes (`writeBytes`) and pieces travel as base64.
 */
export class ArtifactWriter extends CapabilityStatus {
  /** Pieces sent so far. */
  piecesSent: i32 = 0;
  /** Set by `finish()`: the sealed artifact's id, sha256 and size. */
  artifactId: string | null = null;
  sha256: string = "";
  size: i64 = 0;
  /** True after `finish()` succeeded. */
  finished: bool = false;

  private readonly pieceBytes: i32;
  private readonly binary: bool;
  // The request's text before the data, without and with `final`; the buffer keeps room for it
  // in front of the data, so a utf8 piece is sent from where it was written, with no copy.
  private readonly head: string;
  private readonly finalHead: string;
  private readonly headRoom: i32;
  private buffer: ArrayBuffer;
  private used: i32 = 0;
  // A high surrogate that ended the last `write`, waiting for its low half.
  private pendingHigh: u32 = 0;

  /**
   * A writer for output `role` with artifact `type` (e.g. `fasta`) and `label` (empty for
   * none); `pieceBytes` (1 KiB to just under 1 MiB) is the piece size; `encoding` is `utf8` or `base64`.
   */
  constructor(
    public readonly role: string,
    public readonly type: string = "",
    public readonly label: string = "",
    pieceBytes: i32 = WRITE_PIECE_BYTES,
    encoding: string = "utf8",
  ) {
    super();
    const size = min(max(pieceBytes, 1024), ARTIFACT_MAX_PIECE - SLACK);
    const binary = encoding == "base64";
    let head = "{\"abi_version\":1,\"name\":\"artifact.write\",\"args\":{\"role\":" + quote(role);
    if (type.length > 0) head += ",\"type\":" + quote(type);
    if (label.length > 0) head += ",\"label\":" + quote(label);
    head += binary ? ",\"encoding\":\"base64\"" : ",\"encoding\":\"utf8\"";
    const pieceHead = head + ",\"final\":false,\"data\":\"";
    const headRoom = binary ? 0 : String.UTF8.byteLength(pieceHead);
    // Head room, the piece, the slack a last character may take, and the closing `"}}`.
    this.buffer = new ArrayBuffer(headRoom + size + SLACK + 3);
    this.head = pieceHead;
    this.finalHead = head + ",\"final\":true,\"data\":\"";
    this.headRoom = headRoom;
    this.pieceBytes = size;
    this.binary = binary;
    prepareTables();
    if (!binary && encoding != "utf8") abort("ArtifactWriter: encoding must be utf8 or base64, not " + encoding);
  }

  /** Appends `text`; false once the writer has failed or finished. */
  write(text: string): bool {
    if (!this.writable()) return false;
    const source = changetype<usize>(text);
    const units = text.length;
    const base = this.dataStart();
    const limit = base + <usize>this.pieceBytes;
    let out = base + <usize>this.used;
    let i = 0;
    if (this.pendingHigh != 0 && units > 0) {
      const low = <u32>load<u16>(source);
      if ((low & 0xfc00) == 0xdc00) {
        out = this.encodeCodePoint(out, 0x10000 + ((this.pendingHigh - 0xd800) << 10) + (low - 0xdc00));
        i = 1;
      } else {
        out = this.encodeCodePoint(out, 0xfffd);
      }
      this.pendingHigh = 0;
    }
    for (; i < units; i++) {
      if (out >= limit) {
        if (!this.sendFrom(out, false)) return false;
        out = base;
      }
      let code = <u32>load<u16>(source + (<usize>i << 1));
      if (code < 0x80) {
        if (this.binary || load<u8>(ESCAPE_KIND + <usize>code) == 0) {
          store<u8>(out, <u8>code);
          out++;
        } else {
          out = escapeAscii(out, code);
        }
        continue;
      }
      if ((code & 0xfc00) == 0xd800) {
        if (i + 1 == units) {
          this.pendingHigh = code;
          break;
        }
        const low = <u32>load<u16>(source + (<usize>(i + 1) << 1));
        if ((low & 0xfc00) == 0xdc00) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          i++;
        } else {
          code = 0xfffd;
        }
      } else if ((code & 0xfc00) == 0xdc00) {
        // A lone low surrogate has no UTF-8 form.
        code = 0xfffd;
      }
      out = this.encodeCodePoint(out, code);
    }
    this.used = <i32>(out - base);
    return true;
  }

  /** Appends `text` and a line feed. */
  writeLine(text: string): bool {
    return this.write(text) && this.write("\n");
  }

  /**
   * Appends `length` bytes at `source`. In utf8 mode they must be valid UTF-8 (ASCII from
   * static memory is the fast path for generated text); in base64 mode any bytes.
   */
  writeUtf8(source: usize, length: i32): bool {
    if (!this.writable()) return false;
    if (this.pendingHigh != 0) {
      this.pendingHigh = 0;
      this.write("\ufffd");
    }
    const base = this.dataStart();
    const limit = base + <usize>this.pieceBytes;
    let out = base + <usize>this.used;
    const end = source + <usize>length;
    let at = source;
    if (this.binary) {
      while (at < end) {
        if (out >= limit) {
          if (!this.sendFrom(out, false)) return false;
          out = base;
        }
        const count = min(<usize>(end - at), <usize>(limit - out));
        memory.copy(out, at, count);
        out += count;
        at += count;
      }
      this.used = <i32>(out - base);
      return true;
    }
    while (at < end) {
      if (out >= limit) {
        if (!this.sendFrom(out, false)) return false;
        out = base;
      }
      // Copy the longest run that needs no escape and fits, in one move; a run cut short by
      // the piece size takes the rest of its character along, so no piece splits one.
      const stop = min(end, at + (limit - out));
      const special = findJsonSpecial(at, stop);
      let runEnd = special;
      if (runEnd == stop) {
        const most = min(end, stop + 3);
        while (runEnd < most && (load<u8>(runEnd) & 0xc0) == 0x80) runEnd++;
      }
      memory.copy(out, at, runEnd - at);
      out += runEnd - at;
      at = runEnd;
      if (special < stop) {
        out = escapeAscii(out, <u32>load<u8>(at));
        at++;
      }
    }
    this.used = <i32>(out - base);
    return true;
  }

  /** Appends bytes: raw in base64 mode; in utf8 mode they must be valid UTF-8. */
  writeBytes(bytes: Uint8Array): bool {
    return this.writeUtf8(bytes.dataStart, bytes.length);
  }

  /** Sends what is buffered now as a piece (not final). Rarely needed: pieces go out when full. */
  flush(): bool {
    if (!this.writable()) return false;
    if (this.used == 0) return true;
    return this.sendFrom(this.dataStart() + <usize>this.used, false);
  }

  /**
   * Sends the rest with `final` and returns the new artifact's id (it becomes visible when the
   * run ends), or null on error. Calling it again returns the same id.
   */
  finish(): string | null {
    if (this.finished) return this.artifactId;
    if (!this.writable()) return null;
    if (this.pendingHigh != 0) {
      this.pendingHigh = 0;
      this.write("\ufffd");
    }
    if (!this.sendFrom(this.dataStart() + <usize>this.used, true)) return null;
    return this.artifactId;
  }

  private writable(): bool {
    if (!this.ok) return false;
    if (this.finished) {
      this.fail(ErrorCode.TOOL_PANIC, "ArtifactWriter: write after finish() for role " + this.role, "write everything before finish()");
      return false;
    }
    return true;
  }

  // UTF-8 of one code point at `out` (non-ASCII, or ASCII in base64 mode), returns the next address.
  private encodeCodePoint(out: usize, code: u32): usize {
    if (code < 0x80) {
      if (this.binary || load<u8>(ESCAPE_KIND + <usize>code) == 0) {
        store<u8>(out, <u8>code);
        return out + 1;
      }
      return escapeAscii(out, code);
    }
    return encodeUtf8(out, code);
  }

  @inline private dataStart(): usize {
    return changetype<usize>(this.buffer) + <usize>this.headRoom;
  }

  // Sends the buffered data up to `end` as one piece and empties the buffer; false (and
  // failed) on error.
  private sendFrom(end: usize, final: bool): bool {
    const base = this.dataStart();
    const length = <i32>(end - base);
    const head = final ? this.finalHead : this.head;
    const headSize = String.UTF8.byteLength(head);
    let request: usize;
    let size: usize;
    if (this.binary) {
      // Base64 grows the data, so binary pieces are assembled in a separate buffer.
      size = <usize>(headSize + Base64.encodedLength(length) + 3);
      request = heap.alloc(size);
      String.UTF8.encodeUnsafe(changetype<usize>(head), head.length, request);
      closeRequest(Base64.encodeInto(base, length, request + <usize>headSize));
    } else {
      // The head goes right in front of the data (the final head is one byte shorter).
      request = base - <usize>headSize;
      size = <usize>(headSize + length + 3);
      String.UTF8.encodeUnsafe(changetype<usize>(head), head.length, request);
      closeRequest(end);
    }
    const reply = callCapabilityEncoded(request, size);
    if (this.binary) heap.free(request);
    this.used = 0;
    if (!reply.ok) {
      this.takeError(reply);
      return false;
    }
    this.piecesSent++;
    if (!final) return true;
    const written = new ArtifactWritten();
    if (!readWritten(reply.result, written)) {
      this.failFrom(written);
      return false;
    }
    const id = written.artifactId;
    if (id === null) {
      this.fail(ErrorCode.DATA_FORMAT, "artifact.write: the final piece's result has no artifact_id", "the host speaks another version of artifact.write; update the SDK or the host");
      return false;
    }
    this.artifactId = id;
    this.sha256 = written.sha256;
    this.size = written.size;
    this.finished = true;
    return true;
  }
}

// Ends a request after its data: the string's closing quote and the two objects' braces.
function closeRequest(at: usize): void {
  store<u8>(at, 0x22);
  store<u8>(at + 1, 0x7d);
  store<u8>(at + 2, 0x7d);
}

// Writes the JSON escape of ASCII `code` at `out`, returns the next address.
function escapeAscii(out: usize, code: u32): usize {
  store<u8>(out, 0x5c);
  if (load<u8>(ESCAPE_KIND + <usize>code) == 1) {
    store<u8>(out + 1, load<u8>(ESCAPE_LETTER + <usize>code));
    return out + 2;
  }
  const digits = "0123456789abcdef";
  store<u8>(out + 1, 0x75);
  store<u8>(out + 2, 0x30);
  store<u8>(out + 3, 0x30);
  store<u8>(out + 4, <u8>digits.charCodeAt((code >> 4) & 0xf));
  store<u8>(out + 5, <u8>digits.charCodeAt(code & 0xf));
  return out + 6;
}
