// Bioinformatics helpers of the SDK: streaming FASTA/FASTQ records (seq-reader.ts) and the
// labels of derived artifacts (output-label.ts).

export { DEFAULT_MAX_RECORD_BYTES, MAX_SEQ_HEADER_BYTES, SEQ_FORMAT_HINT, SeqFormat, SeqPart, SeqReader } from "./seq-reader";
export { clipText, MAX_ARTIFACT_LABEL_LENGTH, outputLabel } from "./output-label";
