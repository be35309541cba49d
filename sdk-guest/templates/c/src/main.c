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

static helix_result handle(const helix_value *input) {
  /* The host has already checked the input against schemas/input.json and that `sequences`
   * names an artifact in its store, so the field is there and is a string. */
  const char *id = helix_get_string(input, "sequences");

  /* Each capability call is listed in the manifest's capabilities.allow. A failure keeps the
   * host's code and message (an unknown id, a policy that does not grant the call). */
  helix_artifact_info info;
  helix_status status = helix_artifact_stat(id, &info);
  if (!status.ok) return helix_status_to_result(&status, "artifact.stat");

  /* The reader asks for the file in pieces of at most 1 MiB (gzip is decompressed by the
   * host); with keep_sequence false a record of any length is counted, never held. */
  helix_seq_reader reader;
  helix_seq_init(&reader, id, info.is_gzip);
  reader.keep_sequence = false;
  /* The output is written under the role declared in the manifest's declaredOutputs. */
  helix_artifact_writer out;
  helix_awriter_init(&out, "lengths", "tsv", "record lengths");
  helix_awriter_write_string(&out, "id\tlength\n");
  int64_t records = 0, total = 0;
  while (helix_seq_next(&reader)) {
    records++;
    total += reader.sequence_length;
    char *line = helix_format("%.*s\t%lld\n", (int)reader.id_length, reader.id, (long long)reader.sequence_length);
    helix_awriter_write_string(&out, line);
    helix_free(line);
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
