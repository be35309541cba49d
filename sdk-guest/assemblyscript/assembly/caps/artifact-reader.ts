// Streaming text reads of an artifact: pulls `artifact.read` pieces on demand and hands out
// lines or line parts. Each piece stays as UTF-8 bytes in the buffer the host answered in
// (unescaped in place), so reading 100 MB holds about one 1 MiB piece and allocates no
// piece-sized strings; the byte-level methods let hot loops skip strings altogether. The
// unescaping already meets every LF (each arrives as a `\n` escape), so it records their
// offsets and the line methods look line ends up instead of scanning the piece again.

import { callCapabilityInPlace } from "../capability";
import { CodeUnitBuffer, OffsetList } from "../json/buffer";
import { JSONObject } from "../json/value";
import { ErrorCode } from "../result";
import { ARTIFACT_MAX_PIECE } from "./artifact";
import { badResult, CapabilityStatus } from "./status";

/** Longest line `nextLine` returns by default, in UTF-16 code units (1 Mi). */
export const DEFAULT_MAX_LINE_LENGTH: i32 = 1024 * 1024;

/** Code of the reader's own limit errors (a line or `readAll` beyond its limit). */
export const TOO_LARGE_CODE = "I-REQ-TOO-LARGE";

// The CR a part consists of when a piece ended in CR and the next did not start with LF.
const CR_BYTE: usize = memory.data<u8>([0x0d]);

// The LF offsets of the piece fetched last, by whichever reader fetched it, in static memory:
// a list on the heap, beside 1 MiB response buffers, changed the heap's layout enough to cost
// tools up to 120 pages more at peak, and a large static one moved every heap address enough
// to do the same (the allocator doubles memory when it grows). 64 KiB lists a 1 MiB piece of
// 64-byte lines; past that, and for a reader whose piece is no longer the one listed, the line
// methods scan for LFs (findLineFeed, about 3.5 fuel a byte).
const FEED_CAPACITY: i32 = 16384;
// The list's address, made on the first fetch (so modules that never read an artifact hold
// neither the list nor its storage), and which fetch it belongs to (each takes a new tag).
let feedsList: usize = 0;
let feedsTag: i32 = 0;

function sharedFeeds(): OffsetList {
  if (feedsList == 0) feedsList = changetype<usize>(OffsetList.fixed(memory.data(FEED_CAPACITY << 2, 16), FEED_CAPACITY));
  return changetype<OffsetList>(feedsList);
}

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

  private readonly pieceLength: i32;
  // The response buffer that holds the current piece (0 when none), and the piece in it.
  private buffer: usize = 0;
  private window: usize = 0;
  private windowLength: i32 = 0;
  private position: i32 = 0;
  private lastPiece: bool = false;
  // A CR that ended a piece: dropped if the next piece starts with LF, else kept as text.
  private pendingCR: bool = false;
  // True while a line has been partly returned and its end has not.
  private lineOpen: bool = false;
  // The tag of this reader's current piece (see sharedFeeds), and the next listed LF to use.
  private feedTag: i32 = -1;
  private feedNext: i32 = 0;

  /**
   * A reader of artifact `artifactId`; `decompress` reads a gzip artifact's content (see
   * `ArtifactInfo.isGzip`); `pieceLength` is the bytes asked per call (4 to 1 MiB).
   */
  constructor(
    public readonly artifactId: string,
    public readonly decompress: bool = false,
    pieceLength: i32 = ARTIFACT_MAX_PIECE,
  ) {
    super();
    this.pieceLength = min(max(pieceLength, 4), ARTIFACT_MAX_PIECE);
  }

  /** True once every byte has been handed out (and no error happened). */
  get done(): bool {
    return this.ok && this.lastPiece && this.position >= this.windowLength && !this.pendingCR;
  }

  /**
   * The next text as it arrives: what is left of the current piece, else the next piece.
   * Null at the end or on error. Do not mix with the line methods in the middle of a line.
   */
  nextPiece(): string | null {
    if (!this.ok) return null;
    let prefix = "";
    if (this.pendingCR) {
      this.pendingCR = false;
      prefix = "\r";
    }
    while (this.position >= this.windowLength) {
      if (this.lastPiece) {
        this.close();
        return prefix.length > 0 ? prefix : null;
      }
      if (!this.fetch()) return null;
    }
    const rest = String.UTF8.decodeUnsafe(this.window + <usize>this.position, <usize>(this.windowLength - this.position));
    this.position = this.windowLength;
    return prefix.length > 0 ? prefix + rest : rest;
  }

  /**
   * The next part of the current line, without its line end, as a string: up to the LF when
   * the line ends in this piece (`partEndsLine` true), else up to the end of the piece
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

  // Every case linePartInPiece leaves: a line that goes on past the piece, a CR that ended
  // the last piece, the next fetch, the end, a failed reader.
  private nextLinePartSlow(): bool {
    if (!this.ok) return false;
    while (true) {
      if (this.pendingCR) {
        if (this.position >= this.windowLength && !this.lastPiece) {
          if (!this.fetch()) return false;
          continue;
        }
        this.pendingCR = false;
        if (this.position < this.windowLength) {
          if (load<u8>(this.window + <usize>this.position) != 0x0a) return this.part(CR_BYTE, 1, false);
          this.position++;
        }
        // CR LF split across pieces, or a CR that ends the data: either way the line ends.
        return this.part(this.window, 0, true);
      }
      if (this.position >= this.windowLength) {
        if (this.lastPiece) {
          if (this.lineOpen) return this.part(this.window, 0, true);
          this.close();
          return false;
        }
        if (!this.fetch()) return false;
        continue;
      }
      // A fresh piece, or the rest of one after a CR: its next LF, if any, ends the part.
      if (linePartInPiece(changetype<usize>(this))) return true;
      // No LF is left in the piece.
      const start = this.window + <usize>this.position;
      const end = this.window + <usize>this.windowLength;
      this.position = this.windowLength;
      let partEnd = end;
      if (load<u8>(end - 1) == 0x0d) {
        partEnd--;
        if (!this.lastPiece) this.pendingCR = true;
      }
      if (this.lastPiece) return this.part(start, <i32>(partEnd - start), true);
      if (partEnd > start) return this.part(start, <i32>(partEnd - start), false);
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

  /** Releases the current piece's buffer (done by itself at the end; call it when stopping early). */
  close(): void {
    this.release();
  }

  // Frees the current piece (the first step of fetch; `close` is the public name).
  private release(): void {
    // The list no longer describes a piece of this reader.
    this.feedTag = -1;
    if (this.buffer != 0) heap.free(this.buffer);
    this.buffer = 0;
    this.window = 0;
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

  // Replaces the current piece with the next one; false (and the reader failed) on error.
  private fetch(): bool {
    // The previous piece is consumed: free it before the host allocates the next.
    this.release();
    const args = new JSONObject()
      .setString("artifact_id", this.artifactId)
      .setInteger("offset", this.offset)
      .setInteger("length", this.pieceLength)
      .setBool("decompress", this.decompress)
      .setString("encoding", "utf8");
    // The shared list is rewritten now: whoever held it scans from here on.
    this.feedTag = ++feedsTag;
    const response = callCapabilityInPlace("artifact.read", args, "data", sharedFeeds());
    const reply = response.result;
    if (!reply.ok) {
      response.free();
      this.takeError(reply);
      return false;
    }
    const result = reply.result.isObject ? changetype<JSONObject>(reply.result) : new JSONObject();
    const next = result.getInteger("next_offset", -1);
    const eof = result.get("eof");
    const length = response.rawStart >= 0 ? response.rawLength : -1;
    if (length < 0 || next < 0 || eof === null || !eof.isBool) {
      response.free();
      badResult(this, "artifact.read", length < 0 ? "data" : next < 0 ? "next_offset" : "eof");
      return false;
    }
    const last = result.getBool("eof");
    // A piece that neither advances nor ends would loop forever.
    if (next < this.offset || (next == this.offset && !last)) {
      response.free();
      this.fail(
        ErrorCode.DATA_FORMAT,
        "artifact.read made no progress at offset " + this.offset.toString() + " of " + this.artifactId,
        "the host broke the artifact.read contract; report it with the artifact id",
        new JSONObject().setString("artifact_id", this.artifactId).setInteger("offset", this.offset),
      );
      return false;
    }
    this.buffer = response.pointer;
    this.window = response.pointer + <usize>response.rawStart;
    this.windowLength = length;
    this.position = 0;
    this.feedNext = 0;
    this.offset = next;
    this.lastPiece = last;
    this.pieces++;
    return true;
  }
}

// The hot path of nextLinePartBytes: serves a line that ends in the current piece, looking its
// LF up in the offsets recorded while unescaping. It works on the reader's address, not on a
// managed reference, because AssemblyScript's shadow stack stores a managed reference again
// at every field access through it: that bookkeeping cost more than the rest of a short line.
// False when the slow path must decide. Exported for SeqReader's own hot path (`self` is an
// ArtifactReader's address); not part of the SDK's public API.
@inline
export function linePartInPiece(self: usize): bool {
  if (!load<bool>(self, offsetof<ArtifactReader>("ok")) || load<bool>(self, offsetof<ArtifactReader>("pendingCR"))) return false;
  const position = load<i32>(self, offsetof<ArtifactReader>("position"));
  const window = load<usize>(self, offsetof<ArtifactReader>("window"));
  const start = window + <usize>position;
  let at: usize = 0;
  let listed = false;
  if (load<i32>(self, offsetof<ArtifactReader>("feedTag")) == feedsTag) {
    const feeds = feedsList;
    const count = load<i32>(feeds, offsetof<OffsetList>("length"));
    const list = load<usize>(feeds, offsetof<OffsetList>("pointer"));
    let next = load<i32>(self, offsetof<ArtifactReader>("feedNext"));
    // Skip LFs before the position (nextPiece may have taken the rest of the piece).
    while (next < count) {
      const lf = load<i32>(list + (<usize>next << 2));
      if (lf >= position) {
        at = window + <usize>lf;
        listed = true;
        store<i32>(self, next + 1, offsetof<ArtifactReader>("feedNext"));
        break;
      }
      next++;
    }
    // A complete list without an LF here: none is left in the piece.
    if (!listed && !load<bool>(feeds, offsetof<OffsetList>("overflowed"))) return false;
  }
  if (!listed) {
    // Past the list's room, or another reader's fetch rewrote it: scan.
    const end = window + <usize>load<i32>(self, offsetof<ArtifactReader>("windowLength"));
    at = findLineFeed(start, end);
    if (at >= end) return false;
  }
  const partEnd = at > start && load<u8>(at - 1) == 0x0d ? at - 1 : at;
  store<i32>(self, <i32>(at + 1 - window), offsetof<ArtifactReader>("position"));
  store<usize>(self, start, offsetof<ArtifactReader>("partPointer"));
  store<i32>(self, <i32>(partEnd - start), offsetof<ArtifactReader>("partLength"));
  store<bool>(self, true, offsetof<ArtifactReader>("partEndsLine"));
  store<bool>(self, false, offsetof<ArtifactReader>("lineOpen"));
  store<i64>(self, load<i64>(self, offsetof<ArtifactReader>("lineNumber")) + 1, offsetof<ArtifactReader>("lineNumber"));
  return true;
}

// The address of the first LF in [at, end), or `end`. Sixteen bytes per step (SIMD, one
// fuel unit per instruction like any other): compare with LF, and the lowest set bit of the
// lane mask is the first LF.
function findLineFeed(at: usize, end: usize): usize {
  const feeds = i8x16.splat(0x0a);
  while (at + 16 <= end) {
    const mask = i8x16.bitmask(i8x16.eq(v128.load(at), feeds));
    if (mask != 0) return at + <usize>ctz(mask);
    at += 16;
  }
  while (at < end && load<u8>(at) != 0x0a) at++;
  return at;
}
