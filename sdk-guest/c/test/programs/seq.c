/* Test program for sdk-guest/c/test: reads a FASTA or FASTQ artifact with helix.h's
 * helix_seq_reader, in pieces of "piece" bytes, and returns every record (id, description,
 * lengths, and with "keep" the sequence and quality) so the test can compare them with seqkit
 * and with the AssemblyScript SDK's SeqReader. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

static helix_result handle(const helix_value *input) {
  const char *id = helix_get_string(input, "artifact");
  helix_artifact_info info;
  helix_status s = helix_artifact_stat(id, &info);
  if (!s.ok) return helix_status_to_result(&s, "artifact.stat");
  helix_seq_reader r;
  helix_seq_init(&r, id, info.is_gzip);
  r.source.piece_length = (int32_t)helix_get_int(input, "piece", HELIX_ARTIFACT_MAX_PIECE);
  r.keep_sequence = helix_get_bool(input, "keep", true);
  r.max_record_bytes = (size_t)helix_get_int(input, "max_record", HELIX_SEQ_DEFAULT_MAX_RECORD_BYTES);
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "records"), helix_w_begin_array(&w);
  int64_t total = 0;
  while (helix_seq_next(&r)) {
    total += r.sequence_length;
    helix_w_begin_object(&w);
    helix_w_key(&w, "id"), helix_w_string_n(&w, r.id, r.id_length);
    helix_w_key(&w, "header"), helix_w_string_n(&w, r.header, r.header_length);
    helix_w_key(&w, "description"), helix_w_string(&w, r.description);
    helix_w_key(&w, "length"), helix_w_int(&w, r.sequence_length);
    helix_w_key(&w, "line"), helix_w_int(&w, r.record_line);
    if (r.format == HELIX_SEQ_FASTQ) helix_w_key(&w, "quality_length"), helix_w_int(&w, r.quality_length);
    if (r.sequence) helix_w_key(&w, "sequence"), helix_w_string_n(&w, r.sequence, (size_t)r.sequence_length);
    if (r.quality) helix_w_key(&w, "quality"), helix_w_string_n(&w, r.quality, (size_t)r.quality_length);
    helix_w_end_object(&w);
  }
  if (!r.status.ok) return helix_seq_to_result(&r, "reading");
  helix_w_end_array(&w);
  helix_w_key(&w, "format"), helix_w_string(&w, helix_seq_format_name(&r));
  helix_w_key(&w, "total_length"), helix_w_int(&w, total);
  helix_w_end_object(&w);
  helix_seq_close(&r);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
