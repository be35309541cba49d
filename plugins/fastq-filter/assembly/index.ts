// fastq.filter: keeps the FASTQ records of an artifact (plain or gzip) that are long enough
// and whose mean quality is high enough, and writes them as a new FASTQ artifact. Holds one
// record at a time (the SDK's SeqReader.nextRecord); everything else streams.

import {
  Artifact, ArtifactReader, ArtifactWriter, ErrorCode, JSONObject, outputLabel, Result, run, SEQ_FORMAT_HINT, SeqFormat, SeqReader,
} from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

/** The declared output role (manifest `declaredOutputs`). */
const ROLE = "filtered";
/** Longest read held in memory (sequence and quality each): 4 Mi bases. */
const MAX_READ_LENGTH: i32 = 4 * 1024 * 1024;

// Error probability of each phred+33 quality byte, 10^(-Q/10), for the seqkit mean.
const ERROR_PROBABILITY: usize = memory.data(256 * 8, 8);

function prepareTable(): void {
  memory.fill(ERROR_PROBABILITY, 0, 256 * 8);
  for (let q = 0; q <= 93; q++) store<f64>(ERROR_PROBABILITY + (<usize>(q + 33) << 3), Math.pow(10.0, <f64>q / -10.0));
}

function handle(input: JSONObject): Result {
  // The input schema guarantees the types and ranges; the host has checked the artifact id.
  const id = changetype<string>(input.getString("reads"));
  const minLength = input.getInteger("min_length", 0);
  const hasQualityFilter = input.has("min_mean_quality");
  const minQuality = input.getNumber("min_mean_quality", 0);
  const method = input.getString("mean_quality");
  const arithmetic = method !== null && method == "arithmetic";
  const info = Artifact.stat(id);
  if (!info.ok) return info.toResult("artifact.stat " + id);
  prepareTable();

  const reader = new SeqReader(new ArtifactReader(id, info.isGzip));
  reader.maxRecordBytes = MAX_READ_LENGTH;
  const writer = new ArtifactWriter(ROLE, "fastq", outputLabel(input.getString("label"), "filtered", info));
  let recordsIn: i64 = 0;
  let recordsOut: i64 = 0;
  let basesIn: i64 = 0;
  let basesOut: i64 = 0;
  while (reader.nextRecord()) {
    if (reader.format != SeqFormat.FASTQ) return notFastq(reader, id);
    const length = reader.sequenceLength;
    recordsIn++;
    basesIn += length;
    if (length < minLength) continue;
    if (hasQualityFilter) {
      const mean = arithmetic ? arithmeticMean(reader.qualityPointer, <i32>length) : errorProbabilityMean(reader.qualityPointer, <i32>length);
      if (!(mean >= minQuality)) continue;
    }
    if (!writeRecord(writer, reader)) return writer.toResult("artifact.write " + ROLE);
    recordsOut++;
    basesOut += length;
  }
  if (!reader.ok) return reader.toResult("reading " + id);
  const outputId = writer.finish();
  if (outputId === null) return writer.toResult("artifact.write " + ROLE);
  return Result.ok(new JSONObject()
    .setString("filtered", outputId)
    .setInteger("records_in", recordsIn)
    .setInteger("records_out", recordsOut)
    .setInteger("bases_in", basesIn)
    .setInteger("bases_out", basesOut));
}

/**
 * seqkit's mean quality (`seqkit seq -Q`, seqkit 2.x): the phred value of the mean error
 * probability, -10 * log10(sum(10^(-Q/10)) / length), summed in read order as seqkit does. 0
 * for an empty read.
 */
function errorProbabilityMean(quality: usize, length: i32): f64 {
  if (length == 0) return 0;
  let sum: f64 = 0;
  let i = 0;
  // Four bytes a step, still added one by one in read order (the float sum must be seqkit's).
  for (; i + 4 <= length; i += 4) {
    const four = load<u32>(quality + <usize>i);
    sum += load<f64>(ERROR_PROBABILITY + (<usize>(four & 0xff) << 3));
    sum += load<f64>(ERROR_PROBABILITY + (<usize>((four >> 8) & 0xff) << 3));
    sum += load<f64>(ERROR_PROBABILITY + (<usize>((four >> 16) & 0xff) << 3));
    sum += load<f64>(ERROR_PROBABILITY + (<usize>(four >> 24) << 3));
  }
  for (; i < length; i++) sum += load<f64>(ERROR_PROBABILITY + (<usize>load<u8>(quality + <usize>i) << 3));
  return -10 * Math.log10(sum / <f64>length);
}

/** fastp's mean quality (`fastp -e`): the arithmetic mean of the phred values. 0 for an empty read. */
function arithmeticMean(quality: usize, length: i32): f64 {
  if (length == 0) return 0;
  let sum: i64 = 0;
  let i = 0;
  // Eight bytes per step: the byte sum of a word, from two 16-bit lane sums.
  for (; i + 8 <= length; i += 8) {
    const word = load<u64>(quality + <usize>i);
    const pairs = (word & 0x00ff00ff00ff00ff) + ((word >> 8) & 0x00ff00ff00ff00ff);
    const quads = (pairs & 0x0000ffff0000ffff) + ((pairs >> 16) & 0x0000ffff0000ffff);
    sum += <i64>((quads & 0xffffffff) + (quads >> 32));
  }
  for (; i < length; i++) sum += <i64>load<u8>(quality + <usize>i);
  return <f64>(sum - 33 * <i64>length) / <f64>length;
}

// The line between a record's sequence and its quality, with the line ends around it.
const PLUS_LINE: usize = memory.data<u8>([0x0a, 0x2b, 0x0a]);

// Writes the record as 4 lines, as `seqkit seq` does: '@' header, sequence, '+', quality.
function writeRecord(writer: ArtifactWriter, reader: SeqReader): bool {
  const length = <i32>reader.sequenceLength;
  return writer.writeByte(0x40)
    && writer.writeUtf8(reader.headerPointer, reader.headerLength)
    && writer.writeByte(0x0a)
    && writer.writeUtf8(reader.sequencePointer, length)
    && writer.writeUtf8(PLUS_LINE, 3)
    && writer.writeUtf8(reader.qualityPointer, length)
    && writer.writeByte(0x0a);
}

function notFastq(reader: SeqReader, id: string): Result {
  reader.close();
  const details = new JSONObject().setString("reads", id).setString("format", reader.formatName);
  return Result.error(ErrorCode.DATA_FORMAT, "not FASTQ: " + id + " is FASTA; fastq.filter needs qualities", SEQ_FORMAT_HINT, details);
}
