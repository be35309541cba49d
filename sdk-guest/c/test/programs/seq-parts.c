/* Test program for sdk-guest/c/test/seq-parts.test.ts, the C twin of the AssemblyScript SDK's
 * test/assembly/seq-probe.ts: reads FASTA or FASTQ with helix_seq_reader, restricted to "only"
 * ("FASTA", "FASTQ" or absent), in reads of "piece" bytes; mode "parts" walks
 * helix_seq_next_part and "records" helix_seq_next. It returns every record (header, sequence
 * and quality joined from their parts, and the lengths) and the format, or the reader's error. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

typedef struct text {
  char *data;
  size_t length, capacity;
} text;

static void add(text *t, const char *data, size_t length) {
  if (t->length + length + 1 > t->capacity) {
    t->capacity = (t->length + length + 1) * 2;
    t->data = (char *)helix_realloc(t->data, t->capacity);
  }
  memcpy(t->data + t->length, data, length);
  t->length += length;
}

/* One record's members; `id` only for whole records (NULL for parts). */
static void record(helix_writer *w, const char *header, size_t header_length, const char *sequence, size_t sequence_length, const char *quality,
                   size_t quality_length, const helix_seq_reader *r, const char *id) {
  helix_w_begin_object(w);
  helix_w_key(w, "header"), helix_w_string_n(w, header, header_length);
  if (id) helix_w_key(w, "id"), helix_w_string_n(w, id, r->id_length);
  helix_w_key(w, "sequence"), helix_w_string_n(w, sequence, sequence_length);
  helix_w_key(w, "quality"), helix_w_string_n(w, quality, quality_length);
  helix_w_key(w, "length"), helix_w_int(w, r->sequence_length);
  helix_w_key(w, "quality_length"), helix_w_int(w, r->quality_length);
  helix_w_end_object(w);
}

static helix_result handle(const helix_value *input) {
  const char *id = helix_get_string(input, "artifact");
  const char *only = helix_get_string(input, "only");
  const char *mode = helix_get_string(input, "mode");
  helix_seq_reader r;
  helix_seq_init_format(&r, id, false, !only ? HELIX_SEQ_NONE : helix_strcmp(only, "FASTQ") == 0 ? HELIX_SEQ_FASTQ : HELIX_SEQ_FASTA);
  r.source.piece_length = (int32_t)helix_get_int(input, "piece", HELIX_ARTIFACT_MAX_PIECE);
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "records"), helix_w_begin_array(&w);
  if (mode && helix_strcmp(mode, "records") == 0) {
    while (helix_seq_next(&r)) {
      size_t q = r.quality ? (size_t)r.quality_length : 0;
      record(&w, r.header, r.header_length, r.sequence, (size_t)r.sequence_length, r.quality ? r.quality : "", q, &r, r.id);
    }
  } else {
    text parts[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (helix_seq_part part = helix_seq_next_part(&r); part != HELIX_SEQ_END; part = helix_seq_next_part(&r)) {
      if (part == HELIX_SEQ_RECORD_END) {
        record(&w, parts[0].data, parts[0].length, parts[1].data, parts[1].length, parts[2].data, parts[2].length, &r, 0);
        parts[0].length = parts[1].length = parts[2].length = 0;
      } else add(&parts[part - HELIX_SEQ_HEADER], r.part_ptr, r.part_len);
    }
  }
  if (!r.status.ok) return helix_seq_to_result(&r, "reading");
  helix_w_end_array(&w);
  helix_w_key(&w, "format"), helix_w_string(&w, helix_seq_format_name(&r));
  helix_w_end_object(&w);
  helix_seq_close(&r);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
