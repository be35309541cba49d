/* __ID__: counts the characters (Unicode code points), words, lines and bytes of a text.
 * Made by `helix new --lang c`; replace it with your own work. The SDK is one header:
 * HELIX_IMPLEMENTATION (in exactly one .c file) compiles it and the ABI exports, and
 * HELIX_TOOL names the handler that becomes the `execute` export. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

static helix_result handle(const helix_value *input) {
  /* The host has already checked the input against schemas/input.json: check here only what
   * a schema cannot say. */
  const helix_value *text = helix_get(input, "text");
  if (!text || text->kind != HELIX_STRING) return helix_error(HELIX_INVALID_INPUT, "text is required", "pass {\"text\": \"...\"}");

  int64_t characters = 0, words = 0, lines = 0;
  bool in_word = false;
  for (size_t i = 0; i < text->length; i++) {
    unsigned char byte = (unsigned char)text->string[i];
    /* Control characters other than tab, LF and CR are refused, naming the first one. */
    if (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') {
      char *message = helix_format("text has a control character U+%x at character %lld", byte, (long long)characters);
      char *details = helix_format("{\"code_point\":%u,\"index\":%lld}", byte, (long long)characters);
      return helix_error_details(HELIX_INVALID_INPUT, message, "remove control characters; tab, LF and CR are allowed", details);
    }
    if ((byte & 0xc0) != 0x80) characters++; /* every byte but a UTF-8 continuation starts a character */
    if (byte == '\n') lines++;
    bool space = byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r';
    if (!space && !in_word) words++;
    in_word = !space;
  }
  if (text->length > 0 && text->string[text->length - 1] != '\n') lines++; /* a last line without LF */

  /* A capability call: one structured log line. Failing to log is not worth failing the call. */
  char *fields = helix_format("{\"characters\":%lld}", (long long)characters);
  helix_status logged = helix_log_info("count.done", fields);
  helix_status_free(&logged);

  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "characters"), helix_w_int(&w, characters);
  helix_w_key(&w, "words"), helix_w_int(&w, words);
  helix_w_key(&w, "lines"), helix_w_int(&w, lines);
  helix_w_key(&w, "bytes"), helix_w_int(&w, (int64_t)text->length);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
