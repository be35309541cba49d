/* The tool's code, made by `helix new --lang c` from the C template: it reads a FASTA or FASTQ
 * artifact with the SDK's streaming reader, counts its records and their total length, and
 * writes each record's id and length as a TSV artifact. Replace `handle` with your own work.
 *
 * There is no libc: no printf, malloc or string.h. helix.h brings what a tool needs instead
 * (helix_format, helix_malloc/helix_free, memcpy, the JSON writer, the capability wrappers);
 * its README, sdk-guest/c/README.md in Helix, lists them. HELIX_IMPLEMENTATION (in exactly one
 * .c file) compiles the SDK and the ABI exports, and HELIX_TOOL names the handler that becomes
 * the `execute` export. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

/* Longest id kept for the TSV (a longer one is cut). */
#define MAX_ID 1024

static helix_result handle(const helix_value *input) {
  /* The host has already checked the input against schemas/input.json and that `sequences`
   * names an artifact in its store, so the field is there and is a string. */
  const char *id = helix_get_string(input, "sequences");

  /* Each capability call is listed in the manifest's capabilities.allow. A failure keeps the
   * host's code and message (an unknown id, a policy that does not grant the call). */
  helix_artifact_info info;
  helix_status status = helix_artifact_stat(id, &info);
  if (!status.ok) return helix_status_to_result(&status, "artifact.stat");

  /* The reader has the host copy the file into its 1 MiB buffer a piece at a time (gzip is
   * decompressed by the host), so a file far larger than the tool's memory is read while
   * holding one piece. A tool for one format says so: helix_seq_init_format(..., HELIX_SEQ_FASTQ). */
  helix_seq_reader reader;
  helix_seq_init(&reader, id, info.is_gzip);
  /* The output is written under the role declared in the manifest's declaredOutputs, on the
   * bulk path: pieces go as raw bytes from the writer's buffer. */
  helix_artifact_writer out;
  helix_awriter_init_bulk(&out, "lengths", "tsv", "record lengths");
  helix_awriter_write_string(&out, "id\tlength\n");
  int64_t records = 0, total = 0;
  char line[MAX_ID + 32];
  size_t id_length = 0;
  bool id_done = false;
  /* Parts, not whole records: the header, sequence and quality come a line at a time as
   * pointers into the read buffer, so a record's sequence is never held, only counted. */
  for (helix_seq_part part = helix_seq_next_part(&reader); part != HELIX_SEQ_END; part = helix_seq_next_part(&reader)) {
    if (part == HELIX_SEQ_HEADER && !id_done) {
      /* The id is the header up to the first space or tab. */
      for (size_t i = 0; i < reader.part_len && !id_done; i++) {
        char c = reader.part_ptr[i];
        if (c == ' ' || c == '\t') id_done = true;
        else if (id_length < MAX_ID) line[id_length++] = c;
      }
    } else if (part == HELIX_SEQ_RECORD_END) {
      records++;
      total += reader.sequence_length;
      /* "<id>\t<length>\n" without helix_format: the digits written backwards. */
      char digits[24];
      size_t n = 0;
      uint64_t length = (uint64_t)reader.sequence_length;
      do digits[n++] = (char)('0' + length % 10), length /= 10;
      while (length > 0);
      size_t at = id_length;
      line[at++] = '\t';
      while (n > 0) line[at++] = digits[--n];
      line[at++] = '\n';
      helix_awriter_write(&out, line, at);
      id_length = 0, id_done = false;
    }
  }
  /* A file that is not FASTA or FASTQ stops the reader with D-DATA-FORMAT naming the line. */
  if (!reader.status.ok) return helix_seq_to_result(&reader, "reading");
  const char *lengths = helix_awriter_finish(&out);
  if (!lengths) return helix_status_to_result(&out.status, "artifact.write lengths");

  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "format"), helix_w_string(&w, helix_seq_format_name(&reader));
  helix_w_key(&w, "records"), helix_w_int(&w, records);
  helix_w_key(&w, "total_length"), helix_w_int(&w, total);
  helix_w_key(&w, "lengths"), helix_w_string(&w, lengths);
  helix_w_end_object(&w);
  helix_seq_close(&reader);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
