// Streaming FASTA/FASTQ records over an ArtifactReader's line parts. The format is detected
// from the first non-blank byte ('>' FASTA, '@' FASTQ). Records come out as parts (header,
// sequence and quality bytes as they arrive, a piece of a line at a time) so a tool can count
// a 100 MB record while holding one line piece, or whole (`nextRecord`) when it needs one
// record at a time. Malformed input stops the reader with D-DATA-FORMAT naming the line.

import { ArtifactReader, findLineFeed, linePartInPiece } from "../caps/artifact-reader";
import { CapabilityStatus } from "../caps/status";
import { JSONObject } from "../json/value";
import { ErrorCode, Result } from "../result";

/** The format `SeqReader` detected; NONE until the first record (and for input without one). */
export enum SeqFormat {
  NONE = 0,
  FASTA = 1,
  FASTQ = 2,
}

/** What `SeqReader.next()` delivered. */
export enum SeqPart {
  /** No more records, or an error (check `ok`). */
  END = 0,
  /** A piece of the header line, after '>' or '@' (`partEndsLine` on its last piece). The first piece starts a record. */
  HEADER = 1,
  /** A piece of sequence: the bytes of a sequence line without its line end (never empty). */
  SEQUENCE = 2,
  /** FASTQ: a piece of the quality line (never empty). */
  QUALITY = 3,
  /** The record is complete: `sequenceLength`, `qualityLength` hold its totals. */
  RECORD_END = 4,
}

/** Longest record `nextRecord` gathers by default: 64 Mi bytes of sequence (and of quality). */
export const DEFAULT_MAX_RECORD_BYTES: i32 = 64 * 1024 * 1024;
/** Longest header `nextRecord` gathers (bytes after '>' or '@'). */
export const MAX_SEQ_HEADER_BYTES: i32 = 1024 * 1024;

/** Hint of the reader's format errors. */
export const SEQ_FORMAT_HINT =
  "pass FASTA ('>' header lines, each followed by sequence lines) or FASTQ (4-line records: '@' header, sequence, '+' line, quality of the same length, phred+33 '!'..'~'), plain or gzip";

// Parser states.
const S_START: i32 = 0; // before the first record: blank lines, then '>' or '@'
const S_BETWEEN: i32 = 1; // FASTQ between records (blank lines allowed); FASTA: a held '>' line
const S_HEADER: i32 = 2; // inside a header line
const S_SEQUENCE: i32 = 3; // FASTA sequence lines; the FASTQ sequence line
const S_PLUS: i32 = 4; // FASTQ '+' line
const S_QUALITY: i32 = 5; // FASTQ quality line
const S_BLANK: i32 = 6; // the rest of a blank line between records
const S_DONE: i32 = 7;
// A FASTQ record taken whole from the source's buffer (see takeFastqRecord): its sequence,
// then its quality, are the next parts.
const S_QUEUED_SEQUENCE: i32 = 8;
const S_QUEUED_QUALITY: i32 = 9;

/**
 * Reads FASTA or FASTQ records from an artifact, streaming.
 *
 * FASTA: a record is a '>' line and the lines up to the next '>' line; its sequence is the
 * concatenation of those lines without line ends (LF or CR LF), kept byte for byte as seqkit
 * keeps it (case, spaces and tabs inside lines, gaps; blank lines add nothing). A record may
 * have no sequence. FASTQ: 4-line records ('@' header, sequence, '+' line, quality); the
 * quality must be as long as the sequence and made of '!'..'~' (phred+33 or any ASCII
 * encoding); blank lines between records are skipped; multi-line FASTQ is refused. Before
 * the first record only blank lines may appear. Errors: D-DATA-FORMAT with `details.line`
 * (1-based) and `details.record`; read failures keep the capability's code.
 *
 * Parts, for tools that never hold a record (the pointers are valid until the next call):
 *
 *     const reader = new SeqReader(new ArtifactReader(id, info.isGzip));
 *     for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
 *       if (part == SeqPart.SEQUENCE) count(reader.partPointer, reader.partLength);
 *       else if (part == SeqPart.RECORD_END) lengths.add(reader.sequenceLength);
 *     }
 *     if (!reader.ok) return reader.toResult("reading " + id);
 *
 * Whole records, for tools that need one (the buffers are reused by the next record):
 *
 *     while (reader.nextRecord()) {
 *       use(reader.headerPointer, reader.headerLength, reader.sequencePointer,
 *           <i32>reader.sequenceLength, reader.qualityPointer);   // reader.id(), reader.header()
 *     }
 *     if (!reader.ok) return reader.toResult("reading " + id);
 *
 * Do not mix the two styles within a record.
 *
 * A tool that takes one format only says so (`new SeqReader(source, SeqFormat.FASTQ)`): data in
 * the other format is refused at its first header ("not FASTQ: line 1: expected a '@' header
 * line, found '>' (FASTA; this tool reads FASTQ only)"), and every error's hint names that
 * format alone.
 */
export class SeqReader extends CapabilityStatus {
  /** FASTA or FASTQ once the first record has started. */
  format: SeqFormat = SeqFormat.NONE;
  /** Records started so far: the number (1-based) of the current record. */
  records: i64 = 0;
  /** Sequence bytes of the current record so far (its total at RECORD_END and after nextRecord). */
  sequenceLength: i64 = 0;
  /** Quality bytes of the current record so far (FASTQ). */
  qualityLength: i64 = 0;
  /** The part `next()` delivered: its bytes, valid until the next call on this reader. */
  partPointer: usize = 0;
  partLength: i32 = 0;
  /** True when the part ends its line (for HEADER parts: the end of the header line). */
  partEndsLine: bool = false;
  /** After `nextRecord`: the record's header (after '>' or '@'), sequence and quality bytes. */
  headerPointer: usize = 0;
  headerLength: i32 = 0;
  sequencePointer: usize = 0;
  qualityPointer: usize = 0;
  /**
   * Largest sequence (and quality) `nextRecord` holds; longer records fail with
   * I-REQ-TOO-LARGE. Set it so two buffers of this size fit the tool's `maxMemoryPages`:
   * running out of memory traps without a message.
   */
  maxRecordBytes: i32 = DEFAULT_MAX_RECORD_BYTES;

  private state: i32 = S_START;
  private blankReturn: i32 = S_START;
  // The current line part from the source, and whether it is held for the next call.
  private pointer: usize = 0;
  private length: i32 = 0;
  private ends: bool = false;
  private startsLine: bool = true;
  // Bytes of the current line before the current part (a line may span several parts).
  private column: i64 = 0;
  private lineStart: bool = true;
  private held: bool = false;
  // The sequence and quality of a record taken whole, in the source's buffer.
  private queuedSequence: usize = 0;
  private queuedQuality: usize = 0;
  private queuedLength: i32 = 0;
  private endPending: bool = false;
  // Line of the current record's header, for messages.
  private recordLine: i64 = 0;
  // True when the error is the reader's own (format, limits), not the source's.
  private own: bool = false;
  private readonly headerBuffer: ByteBuffer = new ByteBuffer();
  private readonly sequenceBuffer: ByteBuffer = new ByteBuffer();
  private readonly qualityBuffer: ByteBuffer = new ByteBuffer();

  /**
   * `only`: the one format the reader accepts (FASTA or FASTQ), or NONE for either, detected
   * from the first record.
   */
  constructor(
    public readonly source: ArtifactReader,
    public readonly only: SeqFormat = SeqFormat.NONE,
  ) {
    super();
  }

  /** "FASTA", "FASTQ", or "" before the first record. */
  get formatName(): string {
    return this.format == SeqFormat.FASTA ? "FASTA" : this.format == SeqFormat.FASTQ ? "FASTQ" : "";
  }

  /** The line the reader is on (1-based), for messages. */
  get lineNumber(): i64 {
    return this.ends ? this.source.lineNumber : this.source.lineNumber + 1;
  }

  /** The next part of the input; END at the end of the data or on error (then `ok` is false). */
  next(): SeqPart {
    const fast = linesInPiece(changetype<usize>(this));
    if (fast >= 0) return <SeqPart>fast;
    if (!this.ok || this.state == S_DONE) return SeqPart.END;
    if (this.endPending) {
      this.endPending = false;
      return SeqPart.RECORD_END;
    }
    while (true) {
      if (this.held) this.held = false;
      else if (!this.fetch()) return this.atEnd();
      const p = this.pointer;
      const n = this.length;
      const first = n > 0 ? <i32>load<u8>(p) : -1;
      switch (this.state) {
        case S_START:
        case S_BETWEEN: {
          if (this.startsLine && (first == 0x3e || first == 0x40)) {
            const format = first == 0x3e ? SeqFormat.FASTA : SeqFormat.FASTQ;
            if (this.format == SeqFormat.NONE && this.only != SeqFormat.NONE && this.only != format) {
              const fastq = this.only == SeqFormat.FASTQ;
              return this.formatError(
                "expected a '" + (fastq ? "@" : ">") + "' header line, found '" + printable(first) + "' (" + (fastq ? "FASTA" : "FASTQ") +
                  "; this tool reads " + (fastq ? "FASTQ" : "FASTA") + " only)",
              );
            }
            if (this.format == SeqFormat.NONE) this.format = format;
            else if (this.format != format) {
              return this.formatError("expected a '@' header line, found '" + printable(first) + "'");
            }
            this.records++;
            this.sequenceLength = 0;
            this.qualityLength = 0;
            this.recordLine = this.lineNumber;
            this.state = this.ends ? S_SEQUENCE : S_HEADER;
            return this.deliver(SeqPart.HEADER, p + 1, n - 1);
          }
          const at = firstNonBlank(p, n);
          if (at >= 0) {
            const named = this.namedFormat;
            const expected = named == SeqFormat.FASTQ ? "a '@' header line" : named == SeqFormat.FASTA ? "a '>' header line" : "a header line starting with '>' (FASTA) or '@' (FASTQ)";
            return this.formatError("expected " + expected + ", found '" + printable(<i32>load<u8>(p + <usize>at)) + "'" + this.where(at));
          }
          if (!this.ends) {
            this.blankReturn = this.state;
            this.state = S_BLANK;
          }
          continue;
        }
        case S_BLANK: {
          const at = firstNonBlank(p, n);
          if (at >= 0) return this.formatError("expected a blank line, found '" + printable(<i32>load<u8>(p + <usize>at)) + "'");
          if (this.ends) this.state = this.blankReturn;
          continue;
        }
        case S_HEADER: {
          if (this.ends) this.state = S_SEQUENCE;
          return this.deliver(SeqPart.HEADER, p, n);
        }
        case S_SEQUENCE: {
          if (this.format == SeqFormat.FASTA) {
            if (this.startsLine && first == 0x3e) {
              this.held = true;
              this.state = S_BETWEEN;
              return SeqPart.RECORD_END;
            }
          } else if (this.ends) this.state = S_PLUS;
          if (n == 0) continue;
          this.sequenceLength += n;
          return this.deliver(SeqPart.SEQUENCE, p, n);
        }
        case S_PLUS: {
          if (this.startsLine && first != 0x2b) {
            return this.formatError(
              first < 0 ? "expected the '+' line of record " + this.records.toString() + ", found an empty line (multi-line FASTQ is not supported)"
                : "expected the '+' line of record " + this.records.toString() + ", found '" + printable(first) + "' (multi-line FASTQ is not supported)",
            );
          }
          if (this.ends) this.state = S_QUALITY;
          continue;
        }
        case S_QUALITY: {
          const bad = findNonQuality(p, n);
          if (bad >= 0) {
            return this.formatError("'" + printable(<i32>load<u8>(p + <usize>bad)) + "'" + this.where(bad) + " is not a quality character (phred+33 uses '!'..'~')");
          }
          this.qualityLength += n;
          if (this.qualityLength > this.sequenceLength || (this.ends && this.qualityLength != this.sequenceLength)) {
            return this.lengthMismatch();
          }
          if (this.ends) {
            this.state = S_BETWEEN;
            if (n == 0) return SeqPart.RECORD_END;
            this.endPending = true;
          }
          if (n == 0) continue;
          return this.deliver(SeqPart.QUALITY, p, n);
        }
        default:
          return SeqPart.END;
      }
    }
  }

  /**
   * The next whole record: true with `headerPointer`/`headerLength`, `sequencePointer`/
   * `sequenceLength` and (FASTQ) `qualityPointer`/`qualityLength` set; false at the end or on
   * error. The bytes stay valid until the next call.
   */
  nextRecord(): bool {
    const header = this.headerBuffer;
    const sequence = this.sequenceBuffer;
    const quality = this.qualityBuffer;
    header.length = 0;
    sequence.length = 0;
    quality.length = 0;
    while (true) {
      const part = this.next();
      if (part == SeqPart.END) return false;
      if (part == SeqPart.HEADER && this.state == S_QUEUED_SEQUENCE) {
        // A FASTQ record whole in the source's buffer: point into it, no copy.
        this.headerPointer = this.partPointer;
        this.headerLength = this.partLength;
        this.sequencePointer = this.queuedSequence;
        this.qualityPointer = this.queuedQuality;
        this.sequenceLength = this.queuedLength;
        this.qualityLength = this.queuedLength;
        this.state = S_BETWEEN;
        return true;
      }
      if (part == SeqPart.RECORD_END) break;
      let target = sequence;
      let limit = this.maxRecordBytes;
      if (part == SeqPart.HEADER) {
        target = header;
        limit = MAX_SEQ_HEADER_BYTES;
      } else if (part == SeqPart.QUALITY) target = quality;
      if (target.length + this.partLength > limit) return this.tooLarge(part == SeqPart.HEADER ? "header" : "sequence", limit);
      target.append(this.partPointer, this.partLength);
    }
    this.headerPointer = header.pointer;
    this.headerLength = header.length;
    this.sequencePointer = sequence.pointer;
    this.qualityPointer = quality.pointer;
    return true;
  }

  /** After nextRecord: the whole header line after '>' or '@', as text. */
  header(): string {
    return String.UTF8.decodeUnsafe(this.headerPointer, <usize>this.headerLength);
  }

  /** After nextRecord: the record's id, the header up to the first space or tab. */
  id(): string {
    let end = 0;
    while (end < this.headerLength) {
      const byte = load<u8>(this.headerPointer + <usize>end);
      if (byte == 0x20 || byte == 0x09) break;
      end++;
    }
    return String.UTF8.decodeUnsafe(this.headerPointer, <usize>end);
  }

  /** After nextRecord: the sequence as text (costly for long records; prefer the bytes). */
  sequence(): string {
    return String.UTF8.decodeUnsafe(this.sequencePointer, <usize>this.sequenceLength);
  }

  /** After nextRecord (FASTQ): the quality string. */
  quality(): string {
    return String.UTF8.decodeUnsafe(this.qualityPointer, <usize>this.qualityLength);
  }

  /** Releases the record buffers and the source's piece (done at the end; call it when stopping early). */
  close(): void {
    this.headerBuffer.free();
    this.sequenceBuffer.free();
    this.qualityBuffer.free();
    this.source.close();
  }

  /**
   * The failure as the tool's error result: the reader's own errors (D-DATA-FORMAT,
   * I-REQ-TOO-LARGE) keep their code; read failures are passed on as CapabilityStatus does.
   */
  toResult(context: string): Result {
    if (!this.own) return super.toResult(context);
    const message = context.length > 0 ? context + ": " + this.errorMessage : this.errorMessage;
    return Result.error(this.errorCode, message, this.errorHint, this.errorDetails);
  }

  private fetch(): bool {
    const source = this.source;
    if (!source.nextLinePartBytes()) return false;
    this.column = this.lineStart ? 0 : this.column + <i64>this.length;
    this.pointer = source.partPointer;
    this.length = source.partLength;
    this.ends = source.partEndsLine;
    this.startsLine = this.lineStart;
    this.lineStart = this.ends;
    return true;
  }

  // The source ran out (or failed): close the last record, or report a truncated one.
  private atEnd(): SeqPart {
    const source = this.source;
    if (!source.ok) {
      this.failFrom(source);
      this.own = false;
      this.state = S_DONE;
      return SeqPart.END;
    }
    const state = this.state;
    this.state = S_DONE;
    if (this.format == SeqFormat.FASTA && (state == S_HEADER || state == S_SEQUENCE)) return SeqPart.RECORD_END;
    if (this.format == SeqFormat.FASTQ && state != S_BETWEEN && state != S_BLANK) {
      const missing = state == S_HEADER || state == S_SEQUENCE ? "its sequence, '+' and quality lines" : state == S_PLUS ? "its '+' and quality lines" : "its quality line";
      this.ends = true;
      return this.formatError("the data ends inside record " + this.records.toString() + " (header on line " + this.recordLine.toString() + "), before " + missing);
    }
    return SeqPart.END;
  }

  private deliver(part: SeqPart, pointer: usize, length: i32): SeqPart {
    this.partPointer = pointer;
    this.partLength = length;
    this.partEndsLine = this.ends;
    return part;
  }

  // " at column N" for byte `at` of the current part: N counts bytes from the line start
  // (1-based), also when the line arrived in several parts.
  private where(at: i32): string {
    return " at column " + (this.column + <i64>at + 1).toString();
  }

  // The format named in messages: the one detected, else the one the reader is restricted to.
  private get namedFormat(): SeqFormat {
    return this.format != SeqFormat.NONE ? this.format : this.only;
  }

  // The hint of format errors: the formats this reader takes. The one-format hints are literals
  // here rather than exported constants, which every module built with the SDK would carry.
  private get formatHint(): string {
    if (this.only == SeqFormat.FASTQ) {
      return "pass FASTQ (4-line records: '@' header, sequence, '+' line, quality of the same length, phred+33 '!'..'~'), plain or gzip";
    }
    if (this.only == SeqFormat.FASTA) return "pass FASTA ('>' header lines, each followed by sequence lines), plain or gzip";
    return SEQ_FORMAT_HINT;
  }

  private formatError(reason: string): SeqPart {
    const line = this.lineNumber;
    const named = this.namedFormat;
    const name = named == SeqFormat.FASTQ ? "FASTQ" : named == SeqFormat.FASTA ? "FASTA" : "FASTA or FASTQ";
    const details = new JSONObject()
      .setString("artifact_id", this.source.artifactId)
      .setInteger("line", line)
      .setInteger("record", this.records)
      .setString("format", this.formatName);
    this.fail(ErrorCode.DATA_FORMAT, "not " + name + ": line " + line.toString() + ": " + reason, this.formatHint, details);
    this.own = true;
    this.state = S_DONE;
    this.source.close();
    return SeqPart.END;
  }

  private lengthMismatch(): SeqPart {
    const details = new JSONObject()
      .setString("artifact_id", this.source.artifactId)
      .setInteger("line", this.lineNumber)
      .setInteger("record", this.records)
      .setString("format", "FASTQ")
      .setInteger("sequence_length", this.sequenceLength)
      .setInteger("quality_length", this.qualityLength);
    const longer = this.qualityLength > this.sequenceLength;
    const message = "not FASTQ: line " + this.lineNumber.toString() + ": the quality of record " + this.records.toString() + " (header on line " + this.recordLine.toString() + ") is " +
      (longer ? "longer than" : "shorter than") + " its sequence (" + (longer ? "more than " : "") + this.qualityLength.toString() + " vs " + this.sequenceLength.toString() + ")";
    this.fail(ErrorCode.DATA_FORMAT, message, this.formatHint, details);
    this.own = true;
    this.state = S_DONE;
    this.source.close();
    return SeqPart.END;
  }

  private tooLarge(what: string, limit: i32): bool {
    const details = new JSONObject()
      .setString("artifact_id", this.source.artifactId)
      .setInteger("record", this.records)
      .setInteger("line", this.recordLine)
      .setInteger("max_bytes", limit);
    this.fail(
      "I-REQ-TOO-LARGE",
      "the " + what + " of record " + this.records.toString() + " (line " + this.recordLine.toString() + ") is longer than " + limit.toString() + " bytes, the most this tool holds in memory",
      "split the record into shorter ones before calling this tool",
      details,
    );
    this.own = true;
    this.state = S_DONE;
    this.source.close();
    return false;
  }
}

// The hot path of `next`: header, sequence, '+' and quality lines that end in the source's
// current piece, taken through the source's own hot path. Like it, it works on addresses
// rather than managed references (the shadow stack's bookkeeping on every field access cost
// more than the parsing). Any other case (the first record, a blank line, a line split across
// pieces, a bad byte, the end) is left to `next`: a line already taken is held for it, exactly
// as `fetch` would have left it. Returns the part delivered, or -1.
@inline
function linesInPiece(self: usize): i32 {
  if (!load<bool>(self, offsetof<SeqReader>("ok")) || load<bool>(self, offsetof<SeqReader>("endPending"))) return -1;
  const format = load<i32>(self, offsetof<SeqReader>("format"));
  if (format == SeqFormat.NONE) return -1;
  const fasta = format == SeqFormat.FASTA;
  const source = load<usize>(self, offsetof<SeqReader>("source"));
  while (true) {
    const state = load<i32>(self, offsetof<SeqReader>("state"));
    if (state == S_QUEUED_SEQUENCE) {
      const length = load<i32>(self, offsetof<SeqReader>("queuedLength"));
      store<i64>(self, <i64>length, offsetof<SeqReader>("sequenceLength"));
      store<i32>(self, S_QUEUED_QUALITY, offsetof<SeqReader>("state"));
      return deliverAt(self, SeqPart.SEQUENCE, load<usize>(self, offsetof<SeqReader>("queuedSequence")), length);
    }
    if (state == S_QUEUED_QUALITY) {
      const length = load<i32>(self, offsetof<SeqReader>("queuedLength"));
      store<i64>(self, <i64>length, offsetof<SeqReader>("qualityLength"));
      store<i32>(self, S_BETWEEN, offsetof<SeqReader>("state"));
      store<bool>(self, true, offsetof<SeqReader>("endPending"));
      return deliverAt(self, SeqPart.QUALITY, load<usize>(self, offsetof<SeqReader>("queuedQuality")), length);
    }
    if (state < S_BETWEEN || state == S_HEADER || state > S_QUALITY) return -1;
    let p: usize;
    let n: i32;
    let startsLine: bool;
    if (load<bool>(self, offsetof<SeqReader>("held"))) {
      // The line a FASTA record ended at: its header is next.
      if (!load<bool>(self, offsetof<SeqReader>("ends"))) return -1;
      store<bool>(self, false, offsetof<SeqReader>("held"));
      p = load<usize>(self, offsetof<SeqReader>("pointer"));
      n = load<i32>(self, offsetof<SeqReader>("length"));
      startsLine = load<bool>(self, offsetof<SeqReader>("startsLine"));
    } else {
      if (!linePartInPiece(source)) return -1;
      // What fetch() records; the source's part is always a whole line here.
      p = load<usize>(source, offsetof<ArtifactReader>("partPointer"));
      n = load<i32>(source, offsetof<ArtifactReader>("partLength"));
      startsLine = load<bool>(self, offsetof<SeqReader>("lineStart"));
      const column = startsLine ? 0 : load<i64>(self, offsetof<SeqReader>("column")) + <i64>load<i32>(self, offsetof<SeqReader>("length"));
      store<i64>(self, column, offsetof<SeqReader>("column"));
      store<usize>(self, p, offsetof<SeqReader>("pointer"));
      store<i32>(self, n, offsetof<SeqReader>("length"));
      store<bool>(self, true, offsetof<SeqReader>("ends"));
      store<bool>(self, startsLine, offsetof<SeqReader>("startsLine"));
      store<bool>(self, true, offsetof<SeqReader>("lineStart"));
    }
    const first = n > 0 ? <i32>load<u8>(p) : -1;
    if (state == S_BETWEEN) {
      if (!startsLine || first != (fasta ? 0x3e : 0x40)) break;
      store<i64>(self, load<i64>(self, offsetof<SeqReader>("records")) + 1, offsetof<SeqReader>("records"));
      store<i64>(self, 0, offsetof<SeqReader>("sequenceLength"));
      store<i64>(self, 0, offsetof<SeqReader>("qualityLength"));
      store<i64>(self, load<i64>(source, offsetof<ArtifactReader>("lineNumber")), offsetof<SeqReader>("recordLine"));
      store<i32>(self, !fasta && takeFastqRecord(self, source) ? S_QUEUED_SEQUENCE : S_SEQUENCE, offsetof<SeqReader>("state"));
      return deliverAt(self, SeqPart.HEADER, p + 1, n - 1);
    }
    if (state == S_SEQUENCE) {
      if (fasta) {
        if (startsLine && first == 0x3e) {
          store<bool>(self, true, offsetof<SeqReader>("held"));
          store<i32>(self, S_BETWEEN, offsetof<SeqReader>("state"));
          return SeqPart.RECORD_END;
        }
      } else store<i32>(self, S_PLUS, offsetof<SeqReader>("state"));
      if (n == 0) continue;
      store<i64>(self, load<i64>(self, offsetof<SeqReader>("sequenceLength")) + <i64>n, offsetof<SeqReader>("sequenceLength"));
      return deliverAt(self, SeqPart.SEQUENCE, p, n);
    }
    if (state == S_PLUS) {
      if (!startsLine || first != 0x2b) break;
      store<i32>(self, S_QUALITY, offsetof<SeqReader>("state"));
      continue;
    }
    // The quality line: whole, valid, and as long as the sequence, else next() reports it.
    const quality = load<i64>(self, offsetof<SeqReader>("qualityLength")) + <i64>n;
    if (quality != load<i64>(self, offsetof<SeqReader>("sequenceLength")) || findNonQuality(p, n) >= 0) break;
    store<i64>(self, quality, offsetof<SeqReader>("qualityLength"));
    store<i32>(self, S_BETWEEN, offsetof<SeqReader>("state"));
    if (n == 0) return SeqPart.RECORD_END;
    store<bool>(self, true, offsetof<SeqReader>("endPending"));
    return deliverAt(self, SeqPart.QUALITY, p, n);
  }
  store<bool>(self, true, offsetof<SeqReader>("held"));
  return -1;
}

// After a FASTQ header line: takes the rest of the record (sequence, '+' and quality lines)
// from the source's buffer in one step when all three lines are there and valid (a non-empty
// sequence, a '+' line, a quality of '!'..'~' as long as the sequence); the source moves past
// them, and the parts are queued in the reader. False, with nothing moved, in every other
// case: the line-by-line path then reads the record and reports what is wrong with it. Only
// the sequence line is searched for its LF: a bare '+' line is one byte, and the quality's
// line end must follow exactly as many quality bytes (none of which can be an LF).
@inline
function takeFastqRecord(self: usize, source: usize): bool {
  const buffer = load<usize>(source, offsetof<ArtifactReader>("buffer"));
  const end = buffer + <usize>load<i32>(source, offsetof<ArtifactReader>("windowLength"));
  const sequence = buffer + <usize>load<i32>(source, offsetof<ArtifactReader>("position"));
  const sequenceFeed = findLineFeed(sequence, end);
  const plus = sequenceFeed + 1;
  if (plus + 1 >= end || load<u8>(plus) != 0x2b) return false;
  let plusFeed = plus + 1;
  if (load<u8>(plusFeed) != 0x0a) {
    plusFeed = findLineFeed(plusFeed, end);
    if (plusFeed >= end) return false;
  }
  const sequenceEnd = sequenceFeed > sequence && load<u8>(sequenceFeed - 1) == 0x0d ? sequenceFeed - 1 : sequenceFeed;
  const length = <i32>(sequenceEnd - sequence);
  const quality = plusFeed + 1;
  let qualityFeed = quality + <usize>length;
  if (length == 0 || qualityFeed + 1 >= end) return false;
  if (load<u8>(qualityFeed) == 0x0d) qualityFeed++;
  if (load<u8>(qualityFeed) != 0x0a || findNonQuality(quality, length) >= 0) return false;
  store<i32>(source, <i32>(qualityFeed + 1 - buffer), offsetof<ArtifactReader>("position"));
  store<i64>(source, load<i64>(source, offsetof<ArtifactReader>("lineNumber")) + 3, offsetof<ArtifactReader>("lineNumber"));
  store<usize>(self, sequence, offsetof<SeqReader>("queuedSequence"));
  store<usize>(self, quality, offsetof<SeqReader>("queuedQuality"));
  store<i32>(self, length, offsetof<SeqReader>("queuedLength"));
  // As fetch() would leave it after the quality line.
  store<usize>(self, quality, offsetof<SeqReader>("pointer"));
  store<i32>(self, length, offsetof<SeqReader>("length"));
  return true;
}

@inline
function deliverAt(self: usize, part: SeqPart, pointer: usize, length: i32): i32 {
  store<usize>(self, pointer, offsetof<SeqReader>("partPointer"));
  store<i32>(self, length, offsetof<SeqReader>("partLength"));
  store<bool>(self, true, offsetof<SeqReader>("partEndsLine"));
  return part;
}

/** A growable byte buffer outside the managed heap (heap.alloc / heap.realloc). */
class ByteBuffer {
  pointer: usize = 0;
  length: i32 = 0;
  capacity: i32 = 0;

  append(source: usize, count: i32): void {
    const needed = this.length + count;
    if (needed > this.capacity) {
      let capacity = max(this.capacity * 2, 256);
      while (capacity < needed) capacity *= 2;
      this.pointer = this.pointer == 0 ? heap.alloc(<usize>capacity) : heap.realloc(this.pointer, <usize>capacity);
      this.capacity = capacity;
    }
    memory.copy(this.pointer + <usize>this.length, source, <usize>count);
    this.length = needed;
  }

  free(): void {
    if (this.pointer != 0) heap.free(this.pointer);
    this.pointer = 0;
    this.length = 0;
    this.capacity = 0;
  }
}

// Index of the first byte that is not a space, tab or CR, or -1.
function firstNonBlank(p: usize, n: i32): i32 {
  for (let i = 0; i < n; i++) {
    const byte = load<u8>(p + <usize>i);
    if (byte != 0x20 && byte != 0x09 && byte != 0x0d) return i;
  }
  return -1;
}

// Index of the first byte outside '!'..'~', or -1. Sixteen bytes per step: b - 0x21 (mod 256)
// is above 0x5d exactly for the bytes outside the range.
function findNonQuality(p: usize, n: i32): i32 {
  const low = i8x16.splat(0x21);
  const span = i8x16.splat(0x7e - 0x21);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    if (v128.any_true(i8x16.gt_u(i8x16.sub(v128.load(p + <usize>i), low), span))) break;
  }
  // No bad byte so far and a tail left: the last 16 bytes in one step (overlapping checked
  // ones) when they are all good.
  if (i + 16 > n && i < n && n >= 16 && !v128.any_true(i8x16.gt_u(i8x16.sub(v128.load(p + <usize>(n - 16)), low), span))) return -1;
  for (; i < n; i++) {
    const byte = load<u8>(p + <usize>i);
    if (byte < 0x21 || byte > 0x7e) return i;
  }
  return -1;
}

// A byte for a message: printable ASCII as itself, anything else as U+XXXX (the byte value;
// non-ASCII text is reported by its first UTF-8 byte).
function printable(byte: i32): string {
  if (byte >= 0x20 && byte < 0x7f) return String.fromCharCode(byte);
  const digits = "0123456789ABCDEF";
  return "U+00" + digits.charAt((byte >> 4) & 0xf) + digits.charAt(byte & 0xf);
}
