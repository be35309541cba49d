// Splits the stdio byte stream into newline-delimited frames in bounded memory: a frame over the
// bound is never buffered whole but discarded as it streams, keeping only what its head says.
import { FrameHeadScanner, type FrameHead } from './frame-head.js';

/** One newline-terminated frame of the input. `line` counts frames from 1, for messages. */
export type Frame =
  /** A frame within the bound: its bytes without the LF or CRLF that ended it. */
  | { readonly kind: 'frame'; readonly line: number; readonly bytes: Buffer }
  /** A frame over the bound: its length (without the terminator) and its scanned head. */
  | { readonly kind: 'oversize'; readonly line: number; readonly length: number; readonly head: FrameHead };

const LF = 0x0a;
const CR = 0x0d;

/**
 * Turns chunks of input into frames. At most `maxBytes + 1` bytes of an unfinished frame are
 * held (the one extra is a CR that may start a CRLF); past that the frame is scanned and dropped.
 * The bound counts a frame's bytes without its terminator, so a frame of exactly `maxBytes`
 * bytes passes with either LF or CRLF.
 */
export class FrameReader {
  readonly maxBytes: number;
  #parts: Buffer[] = [];
  #held = 0;
  /** Set while the current frame is over the bound: its scanner and its length so far. */
  #over: { scanner: FrameHeadScanner; length: number; lastByte: number } | undefined;
  #line = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Consumes a chunk; returns the frames it completed, in order. */
  push(chunk: Uint8Array): Frame[] {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const frames: Frame[] = [];
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(LF, start);
      const piece = buf.subarray(start, nl === -1 ? buf.length : nl);
      if (this.#over !== undefined) this.#overflow(piece);
      else this.#hold(piece, nl !== -1);
      if (nl === -1) break;
      frames.push(this.#finish());
      start = nl + 1;
    }
    return frames;
  }

  /** Bytes held for the unfinished frame (never more than `maxBytes + 1`). */
  get heldBytes(): number {
    return this.#held;
  }

  #hold(piece: Buffer, ended: boolean): void {
    if (piece.length === 0) return;
    this.#parts.push(piece);
    this.#held += piece.length;
    const last = piece[piece.length - 1]!;
    // Unfinished, one byte over is allowed only for a CR that an LF may follow; the check at the
    // frame's end then decides with the whole terminator in view.
    const over = ended
      ? this.#held - (last === CR ? 1 : 0) > this.maxBytes
      : this.#held > this.maxBytes + 1 || (this.#held === this.maxBytes + 1 && last !== CR);
    if (!over) return;
    const scanner = new FrameHeadScanner();
    for (const part of this.#parts) scanner.feed(part);
    this.#over = { scanner, length: this.#held, lastByte: last };
    this.#parts = [];
    this.#held = 0;
  }

  #overflow(piece: Buffer): void {
    if (piece.length === 0) return;
    this.#over!.scanner.feed(piece);
    this.#over!.length += piece.length;
    this.#over!.lastByte = piece[piece.length - 1]!;
  }

  #finish(): Frame {
    this.#line += 1;
    const over = this.#over;
    if (over !== undefined) {
      this.#over = undefined;
      return { kind: 'oversize', line: this.#line, length: over.length - (over.lastByte === CR ? 1 : 0), head: over.scanner.result() };
    }
    let bytes = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#held);
    this.#parts = [];
    this.#held = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    return { kind: 'frame', line: this.#line, bytes };
  }
}
