/* The tool's code, made by `helix new --bare --lang c`: it reads the artifact named by `file`
 * through the SDK's streaming reader and returns how many bytes and lines it holds. Put your
 * own work in `handle`, where the bytes are counted.
 *
 * There is no libc: helix.h brings what a tool needs instead (helix_format, helix_malloc and
 * helix_free, memcpy, the JSON writer, the capability wrappers); sdk-guest/c/README.md in Helix
 * lists them. HELIX_IMPLEMENTATION (in exactly one .c file) compiles the SDK and the ABI
 * exports, and HELIX_TOOL names the handler that becomes the `execute` export. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

static helix_result handle(const helix_value *input) {
  /* The host has already checked the input against schemas/input.json and that `file` names
   * an artifact in its store, so the field is there and is a string. */
  const char *id = helix_get_string(input, "file");

  /* Each capability call is listed in the manifest's capabilities.allow. A failure keeps the
   * host's code and message (an unknown id, a policy that does not grant the call). */
  helix_artifact_info info;
  helix_status status = helix_artifact_stat(id, &info);
  if (!status.ok) return helix_status_to_result(&status, "artifact.stat");

  /* The host copies the file into the reader's buffer 1 MiB at a time (gzip decompressed), so
   * a file far larger than the tool's memory is read while holding one piece. */
  helix_artifact_reader reader;
  helix_reader_init(&reader, id, info.is_gzip);
  int64_t bytes = 0, lines = 0;
  char last = '\n';
  const char *data;
  size_t length;
  while (helix_reader_next_piece(&reader, &data, &length)) {
    for (size_t i = 0; i < length; i++) lines += data[i] == '\n';
    bytes += (int64_t)length;
    if (length > 0) last = data[length - 1];
  }
  if (!reader.status.ok) return helix_status_to_result(&reader.status, "reading");
  helix_reader_close(&reader);
  /* A last line without a line end counts too. */
  if (last != '\n') lines++;

  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "bytes"), helix_w_int(&w, bytes);
  helix_w_key(&w, "lines"), helix_w_int(&w, lines);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
