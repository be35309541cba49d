// Streaming writes of one output artifact: text (or bytes) is buffered as raw UTF-8 bytes and
// sent as `artifact.write` pieces through the bulk import (the host copies them out of guest
// memory as they are: no JSON string, no escapes), so a tool can write a 100 MB output with a
// fixed, small amount of memory.

import { BULK_MAX_PIECE } from "../abi";
import { encodeUtf8 } from "../json/buffer";
import { ErrorCode } from "../result";
import { artifactWriteFrom } from "./artifact";
import { CapabilityStatus } from "./status";

/** Default piece size of ArtifactWriter, in bytes (1 MiB). */
export const WRITE_PIECE_BYTES: i32 = 1024 * 1024;

// Room past the piece size: a character is always written whole (at most 4 bytes), and the
// check for a full piece comes before each character.
const SLACK: i32 = 8;

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
 * The artifact's bytes are the UTF-8 of the text written and the bytes written with
 * `writeUtf8` / `writeBytes`, as they are.
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
  // The buffer (allocated on the first write, freed by finish) and the bytes in it.
  private buffer: usize = 0;
  private used: i32 = 0;
  // A high surrogate that ended the last `write`, waiting for its low half.
  private pendingHigh: u32 = 0;

  /**
   * A writer for output `role` with artifact `type` (e.g. `fasta`) and `label` (empty for
   * none); `pieceBytes` (1 KiB to BULK_MAX_PIECE, 4 MiB) is the piece size. `encoding` is
   * kept for older callers: `utf8` and `base64` both write the bytes as they are.
   */
  constructor(
    public readonly role: string,
    public readonly type: string = "",
    public readonly label: string = "",
    pieceBytes: i32 = WRITE_PIECE_BYTES,
    encoding: string = "utf8",
  ) {
    super();
    this.pieceBytes = min(max(pieceBytes, 1024), BULK_MAX_PIECE - SLACK);
    if (encoding != "utf8" && encoding != "base64") abort("ArtifactWriter: encoding must be utf8 or base64, not " + encoding);
  }

  /** Appends `text` as UTF-8 (a lone surrogate becomes U+FFFD); false once the writer has failed or finished. */
  write(text: string): bool {
    if (!this.writable()) return false;
    const source = changetype<usize>(text);
    const units = text.length;
    const base = this.buffer;
    const limit = base + <usize>this.pieceBytes;
    let out = base + <usize>this.used;
    let i = 0;
    if (this.pendingHigh != 0 && units > 0) {
      const low = <u32>load<u16>(source);
      if ((low & 0xfc00) == 0xdc00) {
        out = encodeUtf8(out, 0x10000 + ((this.pendingHigh - 0xd800) << 10) + (low - 0xdc00));
        i = 1;
      } else {
        out = encodeUtf8(out, 0xfffd);
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
        store<u8>(out, <u8>code);
        out++;
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
      out = encodeUtf8(out, code);
    }
    this.used = <i32>(out - base);
    return true;
  }

  /** Appends `text` and a line feed. */
  writeLine(text: string): bool {
    return this.write(text) && this.writeByte(0x0a);
  }

  /** Appends one byte (e.g. 0x0a for a line feed); false once the writer has failed or finished. */
  writeByte(byte: u8): bool {
    if (!this.writable()) return false;
    this.settleHigh();
    if (this.used >= this.pieceBytes && !this.sendFrom(this.buffer + <usize>this.used, false)) return false;
    store<u8>(this.buffer + <usize>this.used, byte);
    this.used++;
    return true;
  }

  /** Appends the `length` bytes at `source` as they are (for a text artifact, UTF-8). */
  writeUtf8(source: usize, length: i32): bool {
    if (!this.writable()) return false;
    this.settleHigh();
    const base = this.buffer;
    const limit = base + <usize>this.pieceBytes;
    let out = base + <usize>this.used;
    let at = source;
    const end = source + <usize>length;
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

  /** Appends bytes as they are. */
  writeBytes(bytes: Uint8Array): bool {
    return this.writeUtf8(bytes.dataStart, bytes.length);
  }

  /** Sends what is buffered now as a piece (not final). Rarely needed: pieces go out when full. */
  flush(): bool {
    if (!this.writable()) return false;
    if (this.used == 0) return true;
    return this.sendFrom(this.buffer + <usize>this.used, false);
  }

  /**
   * Sends the rest with `final` and returns the new artifact's id (it becomes visible when the
   * run ends), or null on error. Calling it again returns the same id.
   */
  finish(): string | null {
    if (this.finished) return this.artifactId;
    if (!this.writable()) return null;
    if (!this.sendFrom(this.buffer + <usize>this.used, true)) return null;
    heap.free(this.buffer);
    this.buffer = 0;
    return this.artifactId;
  }

  // Writes a high surrogate that ended the last `write` as U+FFFD: bytes that are not text
  // follow it, so no low half can. The slack holds it even in a full buffer.
  private settleHigh(): void {
    if (this.pendingHigh == 0) return;
    this.pendingHigh = 0;
    this.used = <i32>(encodeUtf8(this.buffer + <usize>this.used, 0xfffd) - this.buffer);
  }

  // Checks the writer can take bytes, with its buffer allocated.
  private writable(): bool {
    if (!this.ok) return false;
    if (this.finished) {
      this.fail(ErrorCode.TOOL_PANIC, "ArtifactWriter: write after finish() for role " + this.role, "write everything before finish()");
      return false;
    }
    if (this.buffer == 0) this.buffer = heap.alloc(<usize>(this.pieceBytes + SLACK));
    return true;
  }

  // Sends the buffered bytes up to `end` as one piece and empties the buffer; false (and
  // failed) on error.
  private sendFrom(end: usize, final: bool): bool {
    if (final && this.pendingHigh != 0) {
      this.pendingHigh = 0;
      end = encodeUtf8(end, 0xfffd);
    }
    const length = <i32>(end - this.buffer);
    const written = artifactWriteFrom(this.role, this.buffer, length, final, this.type.length > 0 ? this.type : null, this.label.length > 0 ? this.label : null);
    this.used = 0;
    if (!written.ok) {
      this.failFrom(written);
      return false;
    }
    this.piecesSent++;
    if (!final) return true;
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
