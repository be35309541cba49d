/* Test program for sdk-guest/c/test/read-cost.test.ts: reads a FASTA or FASTQ artifact with
 * helix_seq_reader and does almost nothing else, so the fuel it spends is the reading's. Mode
 * "parts" walks helix_seq_next_part as the AssemblyScript SDK's read-cost probe walks SeqReader
 * parts; "records" takes whole records without their sequence (keep_sequence false), "keep" with
 * it. It returns the record count, the sequence and quality bytes, and `sum`, the first plus the
 * last byte of every record's sequence, for checking against a JS reference. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

static helix_result handle(const helix_value *input) {
  const char *id = helix_get_string(input, "artifact");
  const char *mode = helix_get_string(input, "mode");
  helix_seq_reader r;
  helix_seq_init(&r, id, false);
  int64_t records = 0, sequence = 0, quality = 0, sum = 0;
  if (helix_strcmp(mode, "pieces") == 0) {
    const char *data;
    size_t length;
    while (helix_reader_next_piece(&r.source, &data, &length)) sequence += (int64_t)length;
  } else if (helix_strcmp(mode, "parts") == 0) {
    int64_t last = 0;
    for (helix_seq_part part = helix_seq_next_part(&r); part != HELIX_SEQ_END; part = helix_seq_next_part(&r)) {
      if (part == HELIX_SEQ_SEQUENCE) {
        if (r.sequence_length == (int64_t)r.part_len) sum += (unsigned char)r.part_ptr[0];
        last = (unsigned char)r.part_ptr[r.part_len - 1];
      } else if (part == HELIX_SEQ_RECORD_END) {
        if (r.sequence_length > 0) sum += last;
        records++;
        sequence += r.sequence_length;
        quality += r.quality_length;
      }
    }
  } else {
    r.keep_sequence = helix_strcmp(mode, "keep") == 0;
    while (helix_seq_next(&r)) {
      records++;
      sequence += r.sequence_length;
      quality += r.quality_length;
      if (r.sequence && r.sequence_length > 0) sum += (unsigned char)r.sequence[0] + (unsigned char)r.sequence[r.sequence_length - 1];
    }
  }
  if (!r.status.ok) return helix_seq_to_result(&r, "reading");
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "records"), helix_w_int(&w, records);
  helix_w_key(&w, "sequence"), helix_w_int(&w, sequence);
  helix_w_key(&w, "quality"), helix_w_int(&w, quality);
  helix_w_key(&w, "sum"), helix_w_int(&w, sum);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
