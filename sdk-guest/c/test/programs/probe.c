/* Test program for sdk-guest/c/test: one operation per call, chosen by `op`, exercising the
 * parser, the writer, the result envelopes, panics and the capability wrappers of helix.h. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

/* Bytes from a hex string, so tests can hand the parser and writer bytes that are not UTF-8. */
static char *from_hex(const char *hex, size_t *length) {
  size_t n = helix_strlen(hex) / 2;
  char *bytes = helix_malloc(n + 1);
  for (size_t i = 0; i < n; i++) {
    int hi = hex[2 * i] <= '9' ? hex[2 * i] - '0' : hex[2 * i] - 'a' + 10;
    int lo = hex[2 * i + 1] <= '9' ? hex[2 * i + 1] - '0' : hex[2 * i + 1] - 'a' + 10;
    bytes[i] = (char)(hi * 16 + lo);
  }
  *length = n;
  return bytes;
}

static const char *kind_name(helix_kind kind) {
  static const char *names[] = {"null", "bool", "number", "string", "array", "object"};
  return names[kind];
}

/* {"hex"} -> {"ok":true,"json":<re-serialised text>,"kind"} or {"ok":false,"error","offset"}. */
static helix_result op_parse(const helix_value *input) {
  size_t length;
  char *text = from_hex(helix_get_string(input, "hex"), &length);
  helix_doc doc;
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  if (helix_json_parse(text, length, &doc)) {
    char *json = helix_json_stringify(doc.root);
    helix_w_key(&w, "ok"), helix_w_bool(&w, true);
    helix_w_key(&w, "kind"), helix_w_string(&w, kind_name(doc.root->kind));
    helix_w_key(&w, "json"), helix_w_string(&w, json);
    helix_doc_free(&doc);
  } else {
    helix_w_key(&w, "ok"), helix_w_bool(&w, false);
    helix_w_key(&w, "error"), helix_w_string(&w, doc.error);
    helix_w_key(&w, "offset"), helix_w_int(&w, (int64_t)doc.error_offset);
  }
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

/* {"text"}: one number -> its exact int64 (as a decimal string) when it has one, and its double. */
static helix_result op_number(const helix_value *input) {
  const char *text = helix_get_string(input, "text");
  helix_doc doc;
  if (!helix_json_parse(text, helix_strlen(text), &doc)) return helix_error(HELIX_INVALID_INPUT, doc.error, "pass one JSON number");
  int64_t exact;
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "is_integer"), helix_w_bool(&w, doc.root->is_integer);
  if (helix_as_int(doc.root, &exact)) {
    char *decimal = helix_format("%lld", (long long)exact);
    helix_w_key(&w, "int64"), helix_w_string(&w, decimal);
  }
  helix_w_key(&w, "double"), helix_w_number(&w, doc.root->number);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

/* {"hex"} -> {"string": the bytes written as a JSON string} */
static helix_result op_escape(const helix_value *input) {
  size_t length;
  char *bytes = from_hex(helix_get_string(input, "hex"), &length);
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "string"), helix_w_string_n(&w, bytes, length);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

/* {"numbers":[...]} -> {"numbers":[...]} written back with helix_w_number */
static helix_result op_numbers(const helix_value *input) {
  const helix_value *numbers = helix_get_array(input, "numbers");
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "numbers");
  helix_w_begin_array(&w);
  for (size_t i = 0; i < numbers->length; i++) helix_w_number(&w, helix_at(numbers, i)->number);
  helix_w_end_array(&w);
  helix_w_key(&w, "formatted"), helix_w_string(&w, helix_format("%g|%d|%s|%.*s|%zu|%x|%c|%%", 0.25, -42, "s", 2, "abc", (size_t)7, 255u, 'z'));
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

/* {"code","message","hint","details"?} -> that error envelope */
static helix_result op_error(const helix_value *input) {
  const helix_value *details = helix_get_object(input, "details");
  return helix_error_details(helix_get_string(input, "code"), helix_get_string(input, "message"), helix_get_string(input, "hint"),
                             details ? helix_json_stringify(details) : 0);
}

/* Misuse of the writer: a value in an object without a key aborts. */
static helix_result op_writer_misuse(const helix_value *input) {
  (void)input;
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_int(&w, 1);
  return helix_ok_writer(&w);
}

static helix_result op_kv(const helix_value *input) {
  const char *key = helix_get_string(input, "key");
  helix_status s = helix_kv_put(key, helix_json_stringify(helix_get(input, "value")));
  if (!s.ok) return helix_status_to_result(&s, "kv.put");
  helix_reply got;
  const helix_value *value;
  s = helix_kv_get(key, &got, &value);
  if (!s.ok) return helix_status_to_result(&s, "kv.get");
  helix_reply missing;
  const helix_value *absent;
  s = helix_kv_get("no-such-key", &missing, &absent);
  if (!s.ok) return helix_status_to_result(&s, "kv.get");
  helix_reply listed;
  const helix_value *keys;
  s = helix_kv_list("", 10, &listed, &keys);
  if (!s.ok) return helix_status_to_result(&s, "kv.list");
  bool deleted = false;
  s = helix_kv_delete(key, &deleted);
  if (!s.ok) return helix_status_to_result(&s, "kv.delete");
  helix_reply after;
  const helix_value *gone;
  s = helix_kv_get(key, &after, &gone);
  if (!s.ok) return helix_status_to_result(&s, "kv.get");
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "got"), helix_w_value(&w, value);
  helix_w_key(&w, "absent_is_null"), helix_w_bool(&w, absent == 0);
  helix_w_key(&w, "keys"), helix_w_value(&w, keys);
  helix_w_key(&w, "deleted"), helix_w_bool(&w, deleted);
  helix_w_key(&w, "gone_after_delete"), helix_w_bool(&w, gone == 0);
  helix_w_end_object(&w);
  helix_reply_free(&got), helix_reply_free(&missing), helix_reply_free(&listed), helix_reply_free(&after);
  return helix_ok_writer(&w);
}

static helix_result op_log_clock(const helix_value *input) {
  (void)input;
  helix_status s = helix_log_warn("probe.event", "{\"n\":1,\"text\":\"\\u00e9\"}");
  if (!s.ok) return helix_status_to_result(&s, "log.emit");
  helix_status bad = helix_log_emit("info", "bad event!", 0);
  helix_clock_time t;
  s = helix_clock_now(&t);
  if (!s.ok) return helix_status_to_result(&s, "clock.now_unix");
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "unix_ms"), helix_w_int(&w, t.unix_ms);
  helix_w_key(&w, "unix_s"), helix_w_int(&w, t.unix_s);
  helix_w_key(&w, "bad_event_code"), helix_w_string(&w, bad.error_code);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

/* secrets.get is not on the allowlist: the host answers A-AUTH-FORBIDDEN, passed on as the result. */
static helix_result op_forbidden(const helix_value *input) {
  (void)input;
  helix_secret secret;
  helix_status s = helix_secrets_get("api_token", &secret);
  if (s.ok) return helix_error(HELIX_TOOL_PANIC, "secrets.get unexpectedly succeeded", "the probe's allowlist must not hold secrets");
  return helix_status_to_result(&s, "secrets.get api_token");
}

/* A bad argument the tool built (kv.put with an empty key) becomes S-TOOL-CAPABILITY-REQUEST. */
static helix_result op_bad_args(const helix_value *input) {
  (void)input;
  helix_status s = helix_kv_put("", "1");
  return helix_status_to_result(&s, "kv.put");
}

/* {"artifact","piece"?} -> stat fields and, streamed line by line, the line count and total length */
static helix_result op_stat_lines(const helix_value *input) {
  const char *id = helix_get_string(input, "artifact");
  helix_artifact_info info;
  helix_status s = helix_artifact_stat(id, &info);
  if (!s.ok) return helix_status_to_result(&s, helix_format("artifact.stat %s", id));
  helix_artifact_reader r;
  helix_reader_init(&r, id, info.is_gzip);
  r.piece_length = (int32_t)helix_get_int(input, "piece", HELIX_ARTIFACT_MAX_PIECE);
  r.max_line_length = (size_t)helix_get_int(input, "max_line", HELIX_DEFAULT_MAX_LINE_LENGTH);
  const char *line;
  size_t length;
  int64_t chars = 0;
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "lengths"), helix_w_begin_array(&w);
  while (helix_reader_next_line(&r, &line, &length)) chars += (int64_t)length, helix_w_int(&w, (int64_t)length);
  helix_w_end_array(&w);
  if (!r.status.ok) return helix_status_to_result(&r.status, helix_format("artifact.read %s", id));
  helix_w_key(&w, "lines"), helix_w_int(&w, r.line_number);
  helix_w_key(&w, "chars"), helix_w_int(&w, chars);
  helix_w_key(&w, "size"), helix_w_int(&w, info.size);
  helix_w_key(&w, "sha256"), helix_w_string(&w, info.sha256);
  helix_w_key(&w, "is_gzip"), helix_w_bool(&w, info.is_gzip);
  helix_w_key(&w, "type"), helix_w_string(&w, info.type);
  helix_w_end_object(&w);
  helix_reader_close(&r);
  return helix_ok_writer(&w);
}

static helix_result op_abort(const helix_value *input) {
  (void)input;
  helix_abort("probe: deliberate abort \xc3\xa9");
}

static helix_result op_assert(const helix_value *input) {
  int64_t n = helix_get_int(input, "n", 0);
  HELIX_ASSERT(n > 0);
  return helix_ok_json("true", 4);
}

static helix_result op_terminal(const helix_value *input) {
  (void)input;
  return helix_capability_call_result("clock.now_unix", "{}");
}

static helix_result op_oom(const helix_value *input) {
  (void)input;
  for (;;) helix_malloc(1 << 20);
}

static helix_result handle(const helix_value *input) {
  const char *op = helix_get_string(input, "op");
  if (!op) return helix_error(HELIX_INVALID_INPUT, "op is required", "pass {\"op\": \"parse\"} or another operation");
  static const struct { const char *name; helix_handler run; } ops[] = {
      {"parse", op_parse}, {"number", op_number}, {"escape", op_escape}, {"numbers", op_numbers}, {"error", op_error},
      {"writer_misuse", op_writer_misuse}, {"kv", op_kv}, {"log_clock", op_log_clock}, {"forbidden", op_forbidden},
      {"bad_args", op_bad_args}, {"stat_lines", op_stat_lines}, {"abort", op_abort}, {"assert", op_assert},
      {"terminal", op_terminal}, {"oom", op_oom},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (helix_strcmp(op, ops[i].name) == 0) return ops[i].run(input);
  return helix_error_details(HELIX_INVALID_INPUT, helix_format("unknown op %s", op), "see probe.c for the operations", 0);
}

HELIX_TOOL(handle)
