// Streaming text reads of an artifact: pulls `artifact.read` pieces on demand through the bulk
// import (the host copies raw bytes into a buffer the reader owns, no JSON, no escapes) and
// hands out lines or line parts as byte ranges in that buffer. The unread rest of a piece
// moves to the buffer's start before the next read, so a line arrives whole unless it is
// longer than half a piece, and a part never splits a UTF-8 character or a CR LF. Every read
// asks for a whole piece, so reads stay at multiples of the piece size, where the host names
// each piece by its stored chunk instead of hashing it.

import { BULK_MAX_PIECE } from "../abi";
import { CodeUnitBuffer } from "../json/buffer";
import { JSONObject } from "../json/value";
import { ErrorCode } from "../result";
import { artifactReadInto } from "./artifact";
import { CapabilityStatus } from "./status";

/** Longest line `nextLine` returns by default, in UTF-16 code units (1 Mi). */
export const DEFAULT_MAX_LINE_LENGTH: i32 = 1024 * 1024;

/** Bytes one bulk read of the reader asks for by default (1 MiB, the store's chunk size). */
export const READ_PIECE_BYTES: i32 = 1024 * 1024;

/** Code of the reader's own limit errors (a line or `readAll` beyond its limit). */
export const TOO_LARGE_CODE = "I-REQ-TOO-LARGE";

/**
 * Reads an artifact's text piece by piece (utf8; with `decompress`, the gunzipped content of a
 * gzip artifact). Lines end at LF; a CR before the LF is dropped, also when the CR and the LF
 * arrive in different pieces, and a last line without a newline is still a line. On a failed
 * read the methods return null (or false) and the reader holds the error (`ok` false): tell
 * the end of the data from a failure by checking `ok`.
 *
 *     const reader = new ArtifactReader(id, info.isGzip);
 *     for (let line = reader.nextLine(); line !== null; line = reader.nextLine()) { ... }
 *     if (!reader.ok) return reader.toResult("reading " + id);
 */
export class ArtifactReader extends CapabilityStatus {
  /** Byte offset of the next piece to fetch: the host's `next_offset` of the last piece. */
  offset: i64 = 0;
  /** Lines completed so far, which is the number of the line `nextLine` returned last. */
  lineNumber: i64 = 0;
  /** Pieces fetched so far. */
  pieces: i32 = 0;
  /** After a line-part call: true when the part ended its line. */
  partEndsLine: bool = false;
  /** After `nextLinePartBytes`: the part's UTF-8 bytes, valid until the next call on the reader. */
  partPointer: usize = 0;
  partLength: i32 = 0;
  /** Longest line `nextLine` accepts, in UTF-16 code units; longer ones fail with I-REQ-TOO-LARGE. */
  maxLineLength: i32 = DEFAULT_MAX_LINE_LENGTH;

  // The bytes each read asks for, the most the buffer keeps from one piece for the next (the
  // rest of an unfinished line), and the buffer: 0 until the first read and after close, then
  // piece + carry bytes, the bytes in it and the first not handed out yet.
  private readonly piece: i32;
  private readonly carry: i32;
  private buffer: usize = 0;
  private windowLength: i32 = 0;
  private position: i32 = 0;
  // True once the buffer holds the data's last byte.
  private lastPiece: bool = false;
  // True while a line has been partly returned and its end has not.
  private lineOpen: bool = false;

  /**
   * A reader of artifact `artifactId`; `decompress` reads a gzip artifact's content (see
   * `ArtifactInfo.isGzip`); `pieceBytes` is what each read asks for (4 bytes to BULK_MAX_PIECE,
   * 4 MiB). The buffer, one and a half pieces, is allocated on the first read and freed by
   * `close` or at the end.
   */
  constructor(
    public readonly artifactId: string,
    public readonly decompress: bool = false,
    pieceBytes: i32 = READ_PIECE_BYTES,
  ) {
    super();
    this.piece = min(max(pieceBytes, 4), BULK_MAX_PIECE);
    // At least a whole character's lead bytes (3), so nextPiece can always carry one.
    this.carry = max(this.piece >> 1, 4);
  }

  /** True once every byte has been handed out (and no error happened). */
  get done(): bool {
    return this.ok && this.lastPiece && this.position >= this.windowLength;
  }

  /**
   * The next text as it arrives: what is left of the buffer, else the next piece (whole
   * characters). Null at the end or on error. Do not mix with the line methods in the middle
   * of a line.
   */
  nextPiece(): string | null {
    while (true) {
      if (!this.ok) return null;
      const start = this.buffer + <usize>this.position;
      const end = this.buffer + <usize>this.windowLength;
      const cut = this.lastPiece ? end : characterEnd(start, end);
      if (cut > start) {
        this.position = <i32>(cut - this.buffer);
        return String.UTF8.decodeUnsafe(start, cut - start);
      }
      if (this.lastPiece) {
        this.close();
        return null;
      }
      if (!this.fetch()) return null;
    }
  }

  /**
   * The next part of the current line, without its line end, as a string: the whole line
   * (`partEndsLine` true), or for a line longer than half a piece, a part of it
   * (`partEndsLine` false: the line goes on in the next part). Every line ends with exactly one
   * part whose `partEndsLine` is true, so lines of any length can be streamed. Null at the end
   * or on error.
   */
  nextLinePart(): string | null {
    if (!this.nextLinePartBytes()) return null;
    return String.UTF8.decodeUnsafe(this.partPointer, <usize>this.partLength);
  }

  /**
   * `nextLinePart` without making a string: on true, the part is the `partLength` UTF-8 bytes
   * at `partPointer` (whole characters; valid until the next call on this reader). False at
   * the end or on error. The fastest way through large text: scan the bytes in place.
   */
  nextLinePartBytes(): bool {
    if (linePartInPiece(changetype<usize>(this))) return true;
    return this.nextLinePartSlow();
  }

  // Every case linePartInPiece leaves: a line that goes on past the buffer, the next fetch,
  // the end, a failed reader.
  private nextLinePartSlow(): bool {
    while (true) {
      if (!this.ok) return false;
      if (linePartInPiece(changetype<usize>(this))) return true;
      // No LF is left in the buffer.
      const start = this.buffer + <usize>this.position;
      const end = this.buffer + <usize>this.windowLength;
      const rest = <i32>(end - start);
      if (this.lastPiece) {
        if (rest == 0 && !this.lineOpen) {
          this.close();
          return false;
        }
        // The last line, without a newline (a CR that ends the data is a line end too).
        this.position = this.windowLength;
        const partEnd = rest > 0 && load<u8>(end - 1) == 0x0d ? end - 1 : end;
        return this.part(start, <i32>(partEnd - start), true);
      }
      // An unfinished line longer than the buffer carries: hand it out, up to its last whole
      // character and short of a CR that ends the buffer (it may start a CR LF); the rest
      // moves on with the fetch. A CR with more after it is text: no LF is in the buffer.
      if (rest > this.carry) {
        let cut = characterEnd(start, end);
        if (cut == end && load<u8>(cut - 1) == 0x0d) cut--;
        if (cut > start) {
          this.position = <i32>(cut - this.buffer);
          return this.part(start, <i32>(cut - start), false);
        }
      }
      if (!this.fetch()) return false;
    }
  }

  /**
   * The next whole line without its line end (LF or CR LF), or null at the end or on error.
   * A line longer than `maxLineLength` fails the reader with I-REQ-TOO-LARGE; stream such
   * lines with `nextLinePart`.
   */
  nextLine(): string | null {
    let part = this.nextLinePart();
    if (part === null) return null;
    if (this.partEndsLine) return this.checkLength(part.length) ? part : null;
    const line = new CodeUnitBuffer(part.length * 2);
    line.pushString(part);
    while (true) {
      if (!this.checkLength(line.length)) return null;
      part = this.nextLinePart();
      if (part === null) return null;
      line.pushString(part);
      if (this.partEndsLine) break;
    }
    return this.checkLength(line.length) ? line.toString() : null;
  }

  /**
   * Everything not read yet as one string, for small inputs: fails with I-REQ-TOO-LARGE once
   * the content passes `maxBytes` bytes. Null on error.
   */
  readAll(maxBytes: i64 = 4 * 1024 * 1024): string | null {
    const all = new CodeUnitBuffer(1024);
    while (true) {
      const piece = this.nextPiece();
      if (piece === null) break;
      if (this.offset > maxBytes) {
        this.close();
        this.fail(
          TOO_LARGE_CODE,
          "artifact " + this.artifactId + " is larger than the " + maxBytes.toString() + " bytes readAll accepts",
          "read it piece by piece or line by line instead",
          new JSONObject().setString("artifact_id", this.artifactId).setInteger("max_bytes", maxBytes),
        );
        return null;
      }
      all.pushString(piece);
    }
    return this.ok ? all.toString() : null;
  }

  /**
   * Frees the buffer (done by itself at the end; call it when stopping early). What the buffer
   * held and was not handed out is dropped; a later call reads on from `offset`.
   */
  close(): void {
    if (this.buffer != 0) heap.free(this.buffer);
    this.buffer = 0;
    this.windowLength = 0;
    this.position = 0;
  }

  private part(pointer: usize, length: i32, endsLine: bool): bool {
    this.partPointer = pointer;
    this.partLength = length;
    this.partEndsLine = endsLine;
    this.lineOpen = !endsLine;
    if (endsLine) this.lineNumber++;
    return true;
  }

  private checkLength(length: i32): bool {
    if (length <= this.maxLineLength) return true;
    const line = this.lineOpen ? this.lineNumber + 1 : this.lineNumber;
    this.close();
    this.fail(
      TOO_LARGE_CODE,
      "line " + line.toString() + " of artifact " + this.artifactId + " is longer than " + this.maxLineLength.toString() + " characters",
      "raise maxLineLength, or stream long lines with nextLinePart",
      new JSONObject().setInteger("line", line).setInteger("max_line_length", this.maxLineLength),
    );
    return false;
  }

  // Moves what was not handed out to the buffer's start and reads the next piece after it;
  // false (and the reader failed) on error.
  private fetch(): bool {
    if (this.buffer == 0) this.buffer = heap.alloc(<usize>(this.piece + this.carry));
    const kept = this.windowLength - this.position;
    if (kept > 0 && this.position > 0) memory.copy(this.buffer, this.buffer + <usize>this.position, <usize>kept);
    this.position = 0;
    this.windowLength = kept;
    const read = artifactReadInto(this.artifactId, this.offset, this.buffer + <usize>kept, this.piece, this.decompress);
    if (!read.ok) {
      this.close();
      this.failFrom(read);
      return false;
    }
    // A read that neither fills nor ends, or that claims more than was asked, breaks the contract.
    if (read.bytes < 0 || read.bytes > this.piece || read.nextOffset != this.offset + <i64>read.bytes || (read.bytes == 0 && !read.eof)) {
      this.close();
      this.fail(
        ErrorCode.DATA_FORMAT,
        "artifact.read made no progress at offset " + this.offset.toString() + " of " + this.artifactId,
        "the host broke the artifact.read contract; report it with the artifact id",
        new JSONObject().setString("artifact_id", this.artifactId).setInteger("offset", this.offset),
      );
      return false;
    }
    this.windowLength = kept + read.bytes;
    this.offset = read.nextOffset;
    this.lastPiece = read.eof;
    this.pieces++;
    return true;
  }
}

// The hot path of nextLinePartBytes: serves a line whose LF is in the buffer. It works on the
// reader's address, not on a managed reference, because AssemblyScript's shadow stack stores
// a managed reference again at every field access through it: that bookkeeping cost more
// than the rest of a short line. False when the slow path must decide. Exported for
// SeqReader's own hot path (`self` is an ArtifactReader's address); not part of the SDK's
// public API.
@inline
export function linePartInPiece(self: usize): bool {
  if (!load<bool>(self, offsetof<ArtifactReader>("ok"))) return false;
  const buffer = load<usize>(self, offsetof<ArtifactReader>("buffer"));
  const start = buffer + <usize>load<i32>(self, offsetof<ArtifactReader>("position"));
  const end = buffer + <usize>load<i32>(self, offsetof<ArtifactReader>("windowLength"));
  const at = findLineFeed(start, end);
  if (at >= end) return false;
  const partEnd = at > start && load<u8>(at - 1) == 0x0d ? at - 1 : at;
  store<i32>(self, <i32>(at + 1 - buffer), offsetof<ArtifactReader>("position"));
  store<usize>(self, start, offsetof<ArtifactReader>("partPointer"));
  store<i32>(self, <i32>(partEnd - start), offsetof<ArtifactReader>("partLength"));
  store<bool>(self, true, offsetof<ArtifactReader>("partEndsLine"));
  store<bool>(self, false, offsetof<ArtifactReader>("lineOpen"));
  store<i64>(self, load<i64>(self, offsetof<ArtifactReader>("lineNumber")) + 1, offsetof<ArtifactReader>("lineNumber"));
  return true;
}

// The end of the last whole UTF-8 character in [start, end): `end` unless the bytes end
// inside a character (its lead byte and up to two continuation bytes), whose start it is then.
// Bytes that are not UTF-8 at all are left as they are (decoding replaces them).
function characterEnd(start: usize, end: usize): usize {
  let at = end;
  let continuation = 0;
  while (at > start && continuation < 3 && (load<u8>(at - 1) & 0xc0) == 0x80) {
    at--;
    continuation++;
  }
  if (at == start) return continuation == 3 || end == start ? end : start;
  const lead = <u32>load<u8>(at - 1);
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return size > continuation + 1 ? at - 1 : end;
}

// The address of the first LF in [at, end), or `end`. Sixteen bytes per step (SIMD, one
// fuel unit per instruction like any other): compare with LF, and the lowest set bit of the
// lane mask is the first LF. Exported for SeqReader; not part of the SDK's public API.
@inline
export function findLineFeed(at: usize, end: usize): usize {
  const feeds = i8x16.splat(0x0a);
  while (at + 16 <= end) {
    const mask = i8x16.bitmask(i8x16.eq(v128.load(at), feeds));
    if (mask != 0) return at + <usize>ctz(mask);
    at += 16;
  }
  while (at < end && load<u8>(at) != 0x0a) at++;
  return at;
}
