/* Test program for sdk-guest/c/test: http.request and secrets.get through helix.h, against a
 * local server and a policy that grants both. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

/* {"url"} -> status, body, the x-test header (asked for in another case), final url */
static helix_result op_http(const helix_value *input) {
  const char *method = helix_get_string(input, "method");
  const char *body = helix_get_string(input, "body");
  helix_http_response res;
  helix_status s = method ? helix_http_request(method, helix_get_string(input, "url"), "{\"X-Probe\":\"c\"}", body, 0, 0, &res)
                          : helix_http_get(helix_get_string(input, "url"), 0, &res);
  if (!s.ok) return helix_status_to_result(&s, "http.request");
  const char *header = helix_http_header(&res, "X-TEST");
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "status"), helix_w_int(&w, res.status);
  helix_w_key(&w, "body"), helix_w_string_n(&w, res.body, res.body_length);
  helix_w_key(&w, "body_encoding"), helix_w_string(&w, res.body_encoding);
  helix_w_key(&w, "x_test"), header ? helix_w_string(&w, header) : helix_w_null(&w);
  helix_w_key(&w, "url"), helix_w_string(&w, res.url);
  helix_w_end_object(&w);
  helix_reply_free(&res.reply);
  return helix_ok_writer(&w);
}

/* {"name","expected"} -> whether the secret equals `expected`, and its length (never the value) */
static helix_result op_secret(const helix_value *input) {
  helix_secret secret;
  helix_status s = helix_secrets_get(helix_get_string(input, "name"), &secret);
  if (!s.ok) return helix_status_to_result(&s, "secrets.get");
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "matches"), helix_w_bool(&w, helix_strcmp(secret.value, helix_get_string(input, "expected")) == 0);
  helix_w_key(&w, "length"), helix_w_int(&w, (int64_t)helix_strlen(secret.value));
  helix_w_end_object(&w);
  helix_reply_free(&secret.reply);
  return helix_ok_writer(&w);
}

static helix_result handle(const helix_value *input) {
  const char *op = helix_get_string(input, "op");
  if (op && helix_strcmp(op, "http") == 0) return op_http(input);
  if (op && helix_strcmp(op, "secret") == 0) return op_secret(input);
  return helix_error(HELIX_INVALID_INPUT, "op must be http or secret", "pass {\"op\": \"http\", \"url\": ...}");
}

HELIX_TOOL(handle)
