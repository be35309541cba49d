/* Test program for sdk-guest/c/test: copies an artifact (gunzipped when it is gzip) line by
 * line into the declared output `copy` through helix.h's streaming reader and writer, with
 * small pieces on both sides so every boundary case is crossed; with "bytes", piece by piece
 * as raw bytes; with "bulk", piece by piece through helix_artifact_write_from (the bulk path both
 * ways); with "bulk_writer", line by line into a writer made by helix_awriter_init_bulk. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

/* Raw pieces in, raw pieces out: each piece as it came, then a final empty one that seals it. */
static helix_result copy_bulk(helix_artifact_reader *r) {
  const char *data;
  size_t n;
  int64_t pieces = 0;
  helix_artifact_written written;
  helix_status s;
  while (helix_reader_next_piece(r, &data, &n)) {
    s = helix_artifact_write_from("copy", data, n, false, "text", "copied", &written);
    if (!s.ok) return helix_status_to_result(&s, "artifact.write");
    pieces++;
  }
  helix_reader_close(r);
  if (!r->status.ok) return helix_status_to_result(&r->status, "artifact.read");
  s = helix_artifact_write_from("copy", 0, 0, true, "text", "copied", &written);
  if (!s.ok) return helix_status_to_result(&s, "artifact.write");
  helix_writer o;
  helix_w_init(&o);
  helix_w_begin_object(&o);
  helix_w_key(&o, "copy"), helix_w_string(&o, written.artifact_id);
  helix_w_key(&o, "pieces"), helix_w_int(&o, pieces);
  helix_w_key(&o, "size"), helix_w_int(&o, written.size);
  helix_w_end_object(&o);
  return helix_ok_writer(&o);
}

static helix_result handle(const helix_value *input) {
  const char *id = helix_get_string(input, "artifact");
  helix_artifact_info info;
  helix_status s = helix_artifact_stat(id, &info);
  if (!s.ok) return helix_status_to_result(&s, "artifact.stat");
  helix_artifact_reader r;
  helix_reader_init(&r, id, info.is_gzip);
  r.piece_length = (int32_t)helix_get_int(input, "piece", HELIX_ARTIFACT_MAX_PIECE);
  if (helix_get_bool(input, "bulk", false)) return copy_bulk(&r);
  helix_artifact_writer w;
  if (helix_get_bool(input, "bulk_writer", false)) helix_awriter_init_bulk(&w, "copy", "text", "copied");
  else helix_awriter_init(&w, "copy", "text", "copied");
  if (helix_get_bool(input, "bytes", false)) {
    /* Binary: pieces as they come, base64 both ways. */
    r.bytes = w.bytes = true;
    const char *data;
    size_t n;
    while (helix_reader_next_piece(&r, &data, &n))
      if (!helix_awriter_write(&w, data, n)) break;
  }
  int64_t flush_every = helix_get_int(input, "flush_every", 0);
  const char *line;
  size_t length;
  while (helix_reader_next_line(&r, &line, &length)) {
    if (!helix_awriter_write_line(&w, line, length)) break;
    if (flush_every > 0 && r.line_number % flush_every == 0 && !helix_awriter_flush(&w)) break;
  }
  helix_reader_close(&r);
  if (!r.status.ok) return helix_status_to_result(&r.status, "artifact.read");
  const char *out = helix_awriter_finish(&w);
  if (!out) return helix_status_to_result(&w.status, "artifact.write");
  helix_writer o;
  helix_w_init(&o);
  helix_w_begin_object(&o);
  helix_w_key(&o, "copy"), helix_w_string(&o, out);
  helix_w_key(&o, "lines"), helix_w_int(&o, r.line_number);
  helix_w_key(&o, "pieces"), helix_w_int(&o, w.pieces_sent);
  helix_w_key(&o, "size"), helix_w_int(&o, w.written.size);
  helix_w_end_object(&o);
  return helix_ok_writer(&o);
}

HELIX_TOOL(handle)
