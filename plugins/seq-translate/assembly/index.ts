// seq.translate: translates every record of a nucleotide FASTA (or FASTQ) artifact, plain or
// gzip, with the standard genetic code in the frames asked for, into a protein FASTA artifact,
// as `seqkit translate -x` does (same headers, ambiguous codons, line width 60 by default).
// Records are read whole through the SDK's SeqReader: reverse frames start at the last base.

import { Artifact, ArtifactReader, ArtifactWriter, ErrorCode, JSONObject, Log, MAX_SEQ_HEADER_BYTES, Result, run, SeqPart, SeqReader } from "@helix/sdk-as";
import { baseSet, INVALID, prepareCode, translate } from "./code";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

/** The declared output role (manifest `declaredOutputs`). */
const ROLE = "protein";
/** Longest input label used in the default output label (200, the host's limit, minus the prefix). */
const MAX_SOURCE_LABEL: i32 = 180;
/** Longest record held for reverse or several frames, in bases (8 Mi): with its translation and the reader's buffers this fits 512 pages. */
const MAX_RECORD_BASES: i32 = 8 * 1024 * 1024;
const STAGE_SIZE: i32 = 64 * 1024;
const STAGE: usize = memory.data(STAGE_SIZE);
const FORMAT_HINT = "pass nucleotide FASTA or FASTQ: IUPAC codes A C G T U R Y S W K M B D H V N in any case, gaps - and ., spaces (codons with gaps or spaces become X)";

function handle(input: JSONObject): Result {
  // The input schema guarantees a string id, and frames as "all6" or distinct frame numbers.
  const id = changetype<string>(input.getString("fasta"));
  const options = new Options(input);
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);
  // Labels are at most 200 characters: a long input label gives way to the id.
  const requested = input.getString("label");
  const source = info.label;
  const label = requested !== null ? requested : "translation of " + (source !== null && source.length <= MAX_SOURCE_LABEL ? source : id);
  prepareCode();
  const reader = new SeqReader(new ArtifactReader(id, info.isGzip));
  reader.maxRecordBytes = MAX_RECORD_BASES;
  const writer = new ArtifactWriter(ROLE, "fasta", label);
  const translator = new Translator(writer, options);
  // One forward frame needs no lookahead: records stream, whatever their length. Reverse
  // frames start at a record's last base, and several frames come out one after the other,
  // so those hold each record whole.
  const failure = options.frames.length == 1 && options.frames[0] > 0 ? translator.stream(reader) : translator.wholeRecords(reader);
  if (failure !== null) return failure;
  if (!reader.ok) return reader.toResult("artifact.read " + id);
  if (!translator.flush()) return writer.toResult("artifact.write " + ROLE);
  const outputId = writer.finish();
  if (outputId === null) return writer.toResult("artifact.write " + ROLE);
  const output = new JSONObject()
    .setString("protein", outputId)
    .setInteger("records", reader.records)
    .setInteger("translations", translator.translations)
    .setInteger("residues", translator.residues);
  // The log line carries the output and the input id and written size besides.
  const fields = new JSONObject().setString("fasta", id).setInteger("bytes", writer.size);
  for (let i = 0; i < output.size; i++) fields.set(output.keyAt(i), output.valueAt(i));
  Log.info("translate.finished", fields);
  return Result.ok(output);
}

/** The call's options, with seqkit's defaults. */
class Options {
  frames: i32[] = [];
  appendFrame: bool;
  trim: bool;
  toStop: bool;
  clean: bool;
  lineWidth: i32;

  constructor(input: JSONObject) {
    const list = input.getArray("frames");
    if (list !== null) {
      for (let i = 0; i < list.length; i++) this.frames.push(<i32>list.getInteger(i, 1));
    } else if (input.getString("frames") == "all6") {
      this.frames = [1, 2, 3, -1, -2, -3];
    } else {
      this.frames = [1];
    }
    this.appendFrame = input.getBool("append_frame", false);
    this.trim = input.getBool("trim", false);
    this.toStop = input.getBool("to_stop", false);
    this.clean = input.getBool("clean", false);
    this.lineWidth = <i32>input.getInteger("line_width", 60);
  }
}

/** Writes each record's translations, staging output lines so the writer sees 64 KiB at a time. */
class Translator {
  translations: i64 = 0;
  residues: i64 = 0;
  private protein: usize = 0;
  private capacity: i32 = 0;
  private staged: i32 = 0;
  // The translation being written: residues so far, the output column, and whether
  // to_stop or trim has cut it (the rest of it is dropped).
  private written: i64 = 0;
  private column: i32 = 0;
  private cut: bool = false;
  // Streaming: the record's header, its bases so far, and up to two bases of a codon that
  // the next part completes.
  private readonly header: ByteBuffer = new ByteBuffer();
  private basesSeen: i64 = 0;
  private readonly carry: usize = heap.alloc(4);
  private carried: i32 = 0;

  constructor(private readonly writer: ArtifactWriter, private readonly options: Options) {}

  /** Every frame of every record, each record held whole; null, or the error result. */
  wholeRecords(reader: SeqReader): Result | null {
    while (reader.nextRecord()) {
      const sequence = reader.sequencePointer;
      const length = <i32>reader.sequenceLength;
      const bad = firstInvalid(sequence, length);
      if (bad >= 0) return notNucleotide(reader.records, reader.headerPointer, reader.headerLength, <i64>bad, load<u8>(sequence + <usize>bad));
      this.reserve(length / 3 + 1);
      const frames = this.options.frames;
      for (let i = 0; i < frames.length; i++) {
        const frame = frames[i];
        this.begin();
        if (!this.headerLine(reader.headerPointer, reader.headerLength, frame)) return this.writeFailed();
        if (!this.emit(this.protein, translate(sequence, length, frame, this.protein)) || !this.end()) return this.writeFailed();
      }
    }
    return null;
  }

  /** One forward frame, streaming each record's sequence parts; null, or the error result. */
  stream(reader: SeqReader): Result | null {
    const frame = this.options.frames[0];
    const header = this.header;
    for (let part = reader.next(); part != SeqPart.END; part = reader.next()) {
      if (part == SeqPart.HEADER) {
        if (header.length == 0 && this.basesSeen == 0 && this.carried == 0) this.begin();
        if (header.length + reader.partLength > MAX_SEQ_HEADER_BYTES) return headerTooLong(reader.records);
        header.append(reader.partPointer, reader.partLength);
        if (reader.partEndsLine && !this.headerLine(header.pointer, header.length, frame)) return this.writeFailed();
      } else if (part == SeqPart.SEQUENCE) {
        const pointer = reader.partPointer;
        const length = reader.partLength;
        const bad = firstInvalid(pointer, length);
        if (bad >= 0) return notNucleotide(reader.records, header.pointer, header.length, this.basesSeen + bad, load<u8>(pointer + <usize>bad));
        if (!this.streamBases(pointer, length, frame)) return this.writeFailed();
      } else if (part == SeqPart.RECORD_END) {
        if (!this.end()) return this.writeFailed();
        header.length = 0;
        this.basesSeen = 0;
        this.carried = 0;
      }
    }
    return null;
  }

  /** Sends what is staged. */
  flush(): bool {
    if (this.staged == 0) return true;
    const sent = this.writer.writeUtf8(STAGE, this.staged);
    this.staged = 0;
    return sent;
  }

  // Translates the codons of frame `frame` that this part completes: the bases before the
  // frame's start are skipped, a codon split between parts is finished from `carry`.
  private streamBases(pointer: usize, length: i32, frame: i32): bool {
    let at = 0;
    const skip = <i64>(frame - 1) - this.basesSeen;
    if (skip > 0) at = <i32>min(skip, <i64>length);
    this.basesSeen += length;
    while (this.carried > 0 && this.carried < 3 && at < length) {
      store<u8>(this.carry + <usize>this.carried, load<u8>(pointer + <usize>at));
      this.carried++;
      at++;
    }
    if (this.carried == 3) {
      this.reserve(1);
      translate(this.carry, 3, 1, this.protein);
      if (!this.emit(this.protein, 1)) return false;
      this.carried = 0;
    }
    const codons = (length - at) / 3;
    if (codons > 0) {
      this.reserve(codons);
      if (!this.emit(this.protein, translate(pointer + <usize>at, codons * 3, 1, this.protein))) return false;
      at += codons * 3;
    }
    while (at < length) {
      store<u8>(this.carry + <usize>this.carried, load<u8>(pointer + <usize>at));
      this.carried++;
      at++;
    }
    return true;
  }

  private reserve(letters: i32): void {
    if (letters <= this.capacity) return;
    if (this.protein != 0) heap.free(this.protein);
    this.protein = heap.alloc(<usize>letters);
    this.capacity = letters;
  }

  private begin(): void {
    this.written = 0;
    this.column = 0;
    this.cut = false;
  }

  // The header line: as read, or with `_frame=N` after the id and one space before the rest
  // (the description, leading spaces dropped), which is how seqkit's -F writes it.
  private headerLine(header: usize, length: i32, frame: i32): bool {
    if (!this.stageByte(0x3e)) return false;
    if (!this.options.appendFrame) return this.stageBytes(header, length) && this.stageByte(0x0a);
    let idEnd = 0;
    while (idEnd < length && load<u8>(header + <usize>idEnd) != 0x20) idEnd++;
    let rest = idEnd;
    while (rest < length && load<u8>(header + <usize>rest) == 0x20) rest++;
    const marker = String.UTF8.encode("_frame=" + frame.toString() + " ");
    return this.stageBytes(header, idEnd) && this.stageBytes(changetype<usize>(marker), marker.byteLength) &&
      this.stageBytes(header + <usize>rest, length - rest) && this.stageByte(0x0a);
  }

  // Writes `count` more letters of the current translation (at `letters`, changed in place by
  // clean), in lines of the line width: to_stop and trim cut it at the first stop (and X).
  private emit(letters: usize, count: i32): bool {
    if (this.cut) return true;
    const options = this.options;
    let keep = count;
    if (options.toStop || options.trim) {
      for (let i = 0; i < count; i++) {
        const letter = load<u8>(letters + <usize>i);
        // seqkit's --trim cuts at the first X or *, whatever is after it.
        if (letter == 0x2a || (options.trim && letter == 0x58)) {
          keep = i;
          this.cut = true;
          break;
        }
      }
    }
    if (options.clean) {
      for (let i = 0; i < keep; i++) if (load<u8>(letters + <usize>i) == 0x2a) store<u8>(letters + <usize>i, 0x58);
    }
    const width = options.lineWidth > 0 ? options.lineWidth : i32.MAX_VALUE;
    let at = 0;
    while (at < keep) {
      if (this.column == width) {
        if (!this.stageByte(0x0a)) return false;
        this.column = 0;
      }
      const run = min(keep - at, width - this.column);
      if (!this.stageBytes(letters + <usize>at, run)) return false;
      this.column += run;
      at += run;
    }
    this.written += keep;
    return true;
  }

  // Ends the current translation's last line; an empty translation is an empty line.
  private end(): bool {
    this.translations++;
    this.residues += this.written;
    return this.stageByte(0x0a);
  }

  private writeFailed(): Result {
    return this.writer.toResult("artifact.write " + ROLE);
  }

  // One ASCII byte (a line end, '>'), without making a string.
  private stageByte(byte: u8): bool {
    if (this.staged == STAGE_SIZE && !this.flush()) return false;
    store<u8>(STAGE + <usize>this.staged, byte);
    this.staged++;
    return true;
  }

  // Copies bytes to the staging area, sending it when full; long runs go in several copies.
  private stageBytes(source: usize, length: i32): bool {
    let done = 0;
    while (done < length) {
      if (this.staged == STAGE_SIZE && !this.flush()) return false;
      const run = min(length - done, STAGE_SIZE - this.staged);
      memory.copy(STAGE + <usize>this.staged, source + <usize>done, <usize>run);
      this.staged += run;
      done += run;
    }
    return true;
  }
}

/** A growable byte buffer outside the managed heap, for a streamed record's header. */
class ByteBuffer {
  pointer: usize = 0;
  length: i32 = 0;
  private capacity: i32 = 0;

  append(source: usize, count: i32): void {
    const needed = this.length + count;
    if (needed > this.capacity) {
      const grown = max(needed, this.capacity * 2);
      this.pointer = this.pointer == 0 ? heap.alloc(<usize>grown) : heap.realloc(this.pointer, <usize>grown);
      this.capacity = grown;
    }
    memory.copy(this.pointer + <usize>this.length, source, <usize>count);
    this.length = needed;
  }
}

// Index of the first byte that is not a nucleotide code, gap or space, or -1.
function firstInvalid(sequence: usize, length: i32): i32 {
  for (let i = 0; i < length; i++) if (baseSet(load<u8>(sequence + <usize>i)) == INVALID) return i;
  return -1;
}

function notNucleotide(record: i64, header: usize, headerLength: i32, index: i64, byte: u8): Result {
  const character = byte >= 0x21 && byte < 0x7f ? String.fromCharCode(byte) : "U+00" + (byte < 16 ? "0" : "") + byte.toString(16).toUpperCase();
  const id = shortId(header, headerLength, 200);
  const details = new JSONObject()
    .setInteger("record", record)
    .setString("id", id)
    .setInteger("position", index + 1)
    .setString("character", character);
  return Result.error(
    ErrorCode.DATA_FORMAT,
    "not a nucleotide sequence: record " + record.toString() + " (" + id + "), position " + (index + 1).toString() + ": '" + character + "' is not a nucleotide code",
    FORMAT_HINT,
    details,
  );
}

// As SeqReader.nextRecord refuses a header it cannot hold, for the streaming path.
function headerTooLong(record: i64): Result {
  return Result.error(
    "I-REQ-TOO-LARGE",
    "the header of record " + record.toString() + " is longer than " + MAX_SEQ_HEADER_BYTES.toString() + " bytes, the most this tool holds in memory",
    "shorten the header line (a FASTA header is the id and a description)",
    new JSONObject().setInteger("record", record).setInteger("max_bytes", MAX_SEQ_HEADER_BYTES),
  );
}

// The record's id (its header up to the first space or tab), at most `limit` bytes cut at a
// character boundary, for messages: a header may be 1 MiB long.
function shortId(header: usize, length: i32, limit: i32): string {
  let end = 0;
  while (end < length && end < limit) {
    const byte = load<u8>(header + <usize>end);
    if (byte == 0x20 || byte == 0x09) break;
    end++;
  }
  // Back off to the start of a UTF-8 character (continuation bytes are 10xxxxxx).
  if (end < length) while (end > 0 && (load<u8>(header + <usize>end) & 0xc0) == 0x80) end--;
  return String.UTF8.decodeUnsafe(header, <usize>end);
}
