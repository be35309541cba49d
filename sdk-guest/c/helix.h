/* helix.h: the C guest SDK for Helix tools (abi: helix/v1), one header in the stb style.
 *
 * THERE IS NO LIBC. No <stdio.h>, <stdlib.h> or <string.h>, no printf, malloc, strlen or
 * fopen, and no WASI: a tool reaches the outside only through capabilities. Only clang's own
 * freestanding headers work (<stddef.h>, <stdint.h>, <stdbool.h>, <stdarg.h>, <limits.h>). What
 * this header offers instead:
 *   memory   helix_malloc, helix_calloc, helix_realloc, helix_free (and memcpy, memmove,
 *            memset, memcmp, declared here)
 *   strings  helix_strlen, helix_strcmp, helix_strdup, helix_strndup, and helix_format, a
 *            printf that returns a new string (%s %.*s %d %lld %zu %x %c %g ...)
 *   JSON     helix_json_parse, helix_get_* to read, helix_writer (helix_w_*) to write
 *   results  helix_ok_writer, helix_error, helix_error_details; helix_abort for a panic
 *   I/O      the capability wrappers: helix_artifact_* and the streaming helix_reader_* and
 *            helix_awriter_*, helix_seq_* (FASTA/FASTQ records), helix_kv_*, helix_log_*,
 *            helix_clock_*, helix_http_*, helix_secrets_get
 *
 * Every file may include it for the declarations; exactly one .c file of the tool defines
 * HELIX_IMPLEMENTATION before including it, which compiles the implementation and the ABI
 * exports (`alloc`, `dealloc`, `helix_panic`; `memory` comes from the linker). The tool then
 * names its handler once with HELIX_TOOL(handler), which defines the `execute` export:
 *
 *     #define HELIX_IMPLEMENTATION
 *     #include "helix.h"
 *     static helix_result handle(const helix_value *input) {
 *       const char *name = helix_get_string(input, "name");
 *       if (!name) return helix_error(HELIX_INVALID_INPUT, "name is required", "pass {\"name\": \"...\"}");
 *       helix_writer w; helix_w_init(&w);
 *       helix_w_begin_object(&w); helix_w_key(&w, "greeting"); helix_w_string(&w, name); helix_w_end_object(&w);
 *       return helix_ok_writer(&w);
 *     }
 *     HELIX_TOOL(handle)
 *
 * Build (what `npm run build:wasm` does for a C toolpack):
 *     clang --target=wasm32 -mbulk-memory -nostdlib -O2 -I sdk-guest/c -Wl,--no-entry
 *           -Wl,--stack-first -o build/tool.wasm src/main.c
 * The module imports nothing, or only `helix_v1.capability_call` when a capability is called
 * (the linker drops it otherwise).
 * See README.md beside this file for the guide and the API reference. */
#ifndef HELIX_H
#define HELIX_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(__wasm32__)
#error "helix.h targets WebAssembly: compile with clang --target=wasm32"
#endif
#if !defined(__wasm_bulk_memory__)
/* memcpy/memset are implemented with memory.copy/memory.fill; without them clang would turn
 * the SDK's own memcpy into a call to itself. */
#error "compile with -mbulk-memory (helix.h implements memcpy and memset with bulk-memory instructions)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors and results ------------------------------------------------------------- */

/* Error codes guests use most; any CLASS-SUBCODE code of the taxonomy (abi/errors.ts) is accepted. */
#define HELIX_INVALID_INPUT "I-REQ-INPUT"
#define HELIX_TOOL_PANIC "S-TOOL-PANIC"
#define HELIX_DATA_FORMAT "D-DATA-FORMAT"
/* Code a tool reports when a capability refused the arguments the tool itself built. */
#define HELIX_CAPABILITY_REQUEST "S-TOOL-CAPABILITY-REQUEST"
/* Longest message or hint the host accepts; longer ones are cut and end with an ellipsis. */
#define HELIX_MAX_MESSAGE_LENGTH 4096
/* Bytes kept of a panic message for `helix_panic`. */
#define HELIX_PANIC_CAPACITY 1024
/* Nesting the parser accepts by default. */
#define HELIX_DEFAULT_MAX_DEPTH 128

/* A finished tool result, already serialised as its envelope (a buffer from helix_malloc). */
typedef struct helix_result {
  const char *status; /* "ok", "error" or "capability_call" */
  char *envelope;
  size_t length;
} helix_result;

/* ---- memory ---------------------------------------------------------------------------- */

/* The C library's four memory functions, implemented with bulk-memory instructions (the
 * compiler also calls them for struct copies); nothing else of the C library exists. */
void *memcpy(void *__restrict dst, const void *__restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
/* Allocates `size` bytes (8-byte aligned); traps with "out of memory" when memory cannot grow. */
void *helix_malloc(size_t size);
/* The same, returning NULL instead of trapping. */
void *helix_try_malloc(size_t size);
void *helix_calloc(size_t count, size_t size);
void *helix_realloc(void *ptr, size_t size);
void helix_free(void *ptr);
/* A NUL-terminated copy of `length` bytes. */
char *helix_strndup(const char *text, size_t length);
char *helix_strdup(const char *text);
size_t helix_strlen(const char *text);
int helix_strcmp(const char *a, const char *b);
/* A new string from a printf-like format: %s %.*s %d %i %u %ld %lu %lld %llu %zu %c %x %%, and
 * %g for a double written as JSON.stringify writes it (shortest round-trip form; NaN aborts). */
char *helix_format(const char *format, ...);
char *helix_vformat(const char *format, va_list args);

/* ---- panics ---------------------------------------------------------------------------- */

/* Records `message` for `helix_panic` and traps; the host reports S-TOOL-TRAP with the message
 * in details.panic. For faults the tool cannot report as a result. */
__attribute__((noreturn)) void helix_abort(const char *message);
__attribute__((noreturn)) void helix_abortf(const char *format, ...);
__attribute__((noreturn)) void helix__assert_fail(const char *condition, const char *file, int line);
#define HELIX_ASSERT(condition) ((condition) ? (void)0 : helix__assert_fail(#condition, __FILE__, __LINE__))

/* ---- JSON values ---------------------------------------------------------------------- */

typedef enum helix_kind { HELIX_NULL, HELIX_BOOL, HELIX_NUMBER, HELIX_STRING, HELIX_ARRAY, HELIX_OBJECT } helix_kind;

typedef struct helix_value helix_value;
/* An array element (key NULL) or an object member. */
typedef struct helix_member {
  const char *key; /* UTF-8, NUL-terminated */
  size_t key_length;
  helix_value *value;
} helix_member;

struct helix_value {
  helix_kind kind;
  bool boolean;        /* HELIX_BOOL */
  bool is_integer;     /* HELIX_NUMBER written without fraction or exponent, within int64 */
  int64_t integer;     /* HELIX_NUMBER: exact when is_integer */
  double number;       /* HELIX_NUMBER: correctly rounded */
  const char *string;  /* HELIX_STRING: UTF-8, NUL-terminated (\u0000 may occur inside: use length) */
  size_t length;       /* HELIX_STRING: bytes; HELIX_ARRAY / HELIX_OBJECT: element count */
  helix_member *members; /* HELIX_ARRAY / HELIX_OBJECT, in document order */
};

/* A parsed document. Strings point into `text` (parsed in place), so it lives as long as the tree. */
typedef struct helix_doc {
  helix_value *root;     /* NULL when parsing failed */
  const char *error;     /* why it failed (static text), NULL on success */
  size_t error_offset;   /* byte offset of the failure */
  char *owned;           /* buffer freed with the document, or NULL */
  void *arena;           /* node blocks */
} helix_doc;

/* Parses a copy of `length` bytes of strict RFC 8259 JSON (UTF-8 validated; nesting up to 128). */
bool helix_json_parse(const char *text, size_t length, helix_doc *doc);
/* Parses `text` in place: strings are unescaped inside it. `owned` says whether helix_doc_free frees it. */
bool helix_json_parse_in_place(char *text, size_t length, bool owned, uint32_t max_depth, helix_doc *doc);
void helix_doc_free(helix_doc *doc);

/* Object member by key (the last one when a key repeats), or NULL when absent or not an object. */
const helix_value *helix_get(const helix_value *object, const char *key);
bool helix_has(const helix_value *object, const char *key);
/* Typed getters: NULL or `fallback` when the member is absent or of another type. */
const char *helix_get_string(const helix_value *object, const char *key);
double helix_get_number(const helix_value *object, const char *key, double fallback);
/* An integral number within int64 (written as an integer, or as a float with no fraction within 2^53). */
int64_t helix_get_int(const helix_value *object, const char *key, int64_t fallback);
bool helix_get_bool(const helix_value *object, const char *key, bool fallback);
const helix_value *helix_get_object(const helix_value *object, const char *key);
const helix_value *helix_get_array(const helix_value *object, const char *key);
/* Element `index` of an array, or NULL. */
const helix_value *helix_at(const helix_value *array, size_t index);
/* True when `value` is a number with an exact int64 value, stored in *out. */
bool helix_as_int(const helix_value *value, int64_t *out);

/* ---- JSON writer ----------------------------------------------------------------------- */

typedef struct helix_writer {
  char *data; /* NUL-terminated text so far */
  size_t length;
  size_t capacity;
  uint32_t depth;
  uint8_t state[HELIX_DEFAULT_MAX_DEPTH + 2];
} helix_writer;

void helix_w_init(helix_writer *w);
void helix_w_free(helix_writer *w);
void helix_w_begin_object(helix_writer *w);
void helix_w_end_object(helix_writer *w);
void helix_w_begin_array(helix_writer *w);
void helix_w_end_array(helix_writer *w);
void helix_w_key(helix_writer *w, const char *key);
void helix_w_key_n(helix_writer *w, const char *key, size_t length);
/* Strings are escaped as JSON.stringify does; invalid UTF-8 becomes U+FFFD. */
void helix_w_string(helix_writer *w, const char *text);
void helix_w_string_n(helix_writer *w, const char *text, size_t length);
void helix_w_int(helix_writer *w, int64_t value);
/* The shortest text that reads back as `value`, as JSON.stringify writes it; NaN and infinities abort. */
void helix_w_number(helix_writer *w, double value);
void helix_w_bool(helix_writer *w, bool value);
void helix_w_null(helix_writer *w);
/* Trusted, already serialised JSON (one value). */
void helix_w_raw(helix_writer *w, const char *json, size_t length);
void helix_w_value(helix_writer *w, const helix_value *value);
/* JSON text of `value`, a new string. */
char *helix_json_stringify(const helix_value *value);

/* ---- results -------------------------------------------------------------------------- */

/* {"status":"ok","output":<json>}; the output text is trusted as one JSON value. */
helix_result helix_ok_json(const char *output_json, size_t length);
/* The writer's text as the output; frees the writer. */
helix_result helix_ok_writer(helix_writer *w);
helix_result helix_ok_value(const helix_value *value);
/* {"status":"error","error":{code,message,details:{},hint}}. `code` must be a taxonomy code
 * (CLASS-SUBCODE, e.g. I-REQ-INPUT), else it aborts; message and hint are cut at 4096 bytes. */
helix_result helix_error(const char *code, const char *message, const char *hint);
/* The same with `details_json` (one JSON object, trusted; NULL for {}). */
helix_result helix_error_details(const char *code, const char *message, const char *hint, const char *details_json);
/* A terminal capability call: the host performs name(args) and its result becomes the output. */
helix_result helix_capability_call_result(const char *name, const char *args_json);
/* True for CLASS-SUBCODE codes of the taxonomy. */
bool helix_is_taxonomy_code(const char *code);

typedef helix_result (*helix_handler)(const helix_value *input);
/* The body of `execute`: parses the input (I-REQ-INPUT when it is not a JSON object), calls
 * `handler`, returns the packed envelope. */
int64_t helix_run(int32_t ptr, int32_t length, helix_handler handler);
#define HELIX_TOOL(handler) \
  __attribute__((export_name("execute"))) int64_t helix__execute(int32_t ptr, int32_t length) { return helix_run(ptr, length, handler); }

/* ---- capabilities ----------------------------------------------------------------------- */

/* Outcome of a capability call: ok, or the host's error (owned copies; helix_status_free). */
typedef struct helix_status {
  bool ok;
  char *error_code;
  char *error_message;
  char *error_hint;
  char *error_details; /* JSON object text, or NULL */
} helix_status;

void helix_status_free(helix_status *status);
/* The failure as the tool's own error: message "context: <host message>", hint and details
 * kept; codes pass through, except I-REQ-* (arguments the tool built) which becomes
 * S-TOOL-CAPABILITY-REQUEST with details.capability_code. */
helix_result helix_status_to_result(const helix_status *status, const char *context);

/* A capability response, parsed in place in the buffer the host wrote; free with helix_reply_free. */
typedef struct helix_reply {
  helix_status status;
  const helix_value *result; /* capability_result.result on success */
  helix_doc doc;
} helix_reply;

/* Calls `name` with `args_json` (one JSON object, not checked). A response that breaks the
 * ABI's shape aborts. */
helix_reply helix_call_capability(const char *name, const char *args_json);
void helix_reply_free(helix_reply *reply);
/* Lowest level: the raw response text for a request `{"abi_version":1,"name":...,"args":...}`
 * (the caller frees it); its length in *length. */
char *helix_capability_call_raw(const char *request, size_t request_length, size_t *length);

typedef struct helix_clock_time {
  int64_t unix_ms;
  int64_t unix_s;
} helix_clock_time;
helix_status helix_clock_now(helix_clock_time *out);
/* Unix milliseconds, or -1 on failure. */
int64_t helix_clock_now_unix_ms(void);

/* level: debug, info, warn, error; event: 1-100 of A-Za-z0-9_.:-; fields_json: an object or NULL. */
helix_status helix_log_emit(const char *level, const char *event, const char *fields_json);
helix_status helix_log_debug(const char *event, const char *fields_json);
helix_status helix_log_info(const char *event, const char *fields_json);
helix_status helix_log_warn(const char *event, const char *fields_json);
helix_status helix_log_error(const char *event, const char *fields_json);

/* kv.get: *value is the stored JSON (NULL when the key is absent); free it with helix_reply_free(reply). */
helix_status helix_kv_get(const char *key, helix_reply *reply, const helix_value **value);
helix_status helix_kv_put(const char *key, const char *value_json);
helix_status helix_kv_delete(const char *key, bool *deleted);
/* kv.list: *keys is the array of keys; free with helix_reply_free(reply). */
helix_status helix_kv_list(const char *prefix, int32_t limit, helix_reply *reply, const helix_value **keys);

typedef struct helix_artifact_info {
  const char *id;
  const char *sha256;
  int64_t size;
  const char *type;
  const char *compression; /* "gzip" or "" */
  bool is_gzip;
  const char *media_type;
  const char *label;          /* "" when none */
  int64_t created_at;
  const char *created_by_run; /* "" when none */
  helix_reply reply;          /* owns the strings: helix_reply_free(&info.reply) */
} helix_artifact_info;
helix_status helix_artifact_stat(const char *artifact_id, helix_artifact_info *out);
/* artifact.list: *artifacts is an array of objects as artifact.stat returns them. */
helix_status helix_artifact_list(int32_t limit, const char *type, helix_reply *reply, const helix_value **artifacts);

/* Largest piece one read returns or one write sends. */
#define HELIX_ARTIFACT_MAX_PIECE (1024 * 1024)
typedef struct helix_artifact_piece {
  const char *data; /* UTF-8 text (pieces end on a character boundary); raw bytes from helix_artifact_read_bytes */
  size_t length;
  int64_t offset;
  int64_t next_offset;
  bool eof;
  helix_reply reply; /* owns data */
} helix_artifact_piece;
/* One artifact.read; length 0 means the maximum (1 MiB). */
helix_status helix_artifact_read(const char *artifact_id, int64_t offset, int32_t length, bool decompress, helix_artifact_piece *out);
/* The same as bytes (encoding base64, decoded in place): any content, no character boundaries. */
helix_status helix_artifact_read_bytes(const char *artifact_id, int64_t offset, int32_t length, bool decompress, helix_artifact_piece *out);

typedef struct helix_artifact_written {
  int64_t bytes;
  char artifact_id[40]; /* set once final */
  char sha256[80];
  int64_t size;
} helix_artifact_written;
/* One artifact.write piece of UTF-8 text; type and label may be NULL. */
helix_status helix_artifact_write(const char *role, const char *data, size_t length, bool final, const char *type,
                                  const char *label, helix_artifact_written *out);
/* One piece of any bytes (sent base64-encoded, at most HELIX_ARTIFACT_MAX_PIECE). */
helix_status helix_artifact_write_bytes(const char *role, const void *bytes, size_t length, bool final, const char *type,
                                        const char *label, helix_artifact_written *out);

/* The bulk path (capability ABI 2; the manifest must say capabilities.abiVersion: 2): artifact
 * bytes copied raw straight into or out of a buffer of the module's memory, no JSON around them
 * (abi/ABI.md, ABI-BULK-001 to -006). At most HELIX_BULK_MAX_PIECE bytes per call. */
#define HELIX_BULK_MAX_PIECE (4 * 1024 * 1024)
typedef struct helix_bulk_read {
  int32_t bytes;       /* bytes copied into the buffer (0 at the end) */
  int64_t next_offset; /* where to read next: the offset plus bytes */
  bool eof;            /* the piece reaches the end of the content */
} helix_bulk_read;
/* One artifact.read of up to buf_len bytes from `offset` into `buf` (gunzipped with decompress). */
helix_status helix_artifact_read_into(const char *artifact_id, int64_t offset, void *buf, int32_t buf_len, bool decompress, helix_bulk_read *out);
/* One artifact.write of the `length` bytes at `buf` (0 with final only seals); type and label may be NULL. */
helix_status helix_artifact_write_from(const char *role, const void *buf, size_t length, bool final, const char *type, const char *label,
                                       helix_artifact_written *out);

/* RFC 4648 base64 with padding: a new NUL-terminated string (its length in *out_length). */
char *helix_base64_encode(const void *bytes, size_t length, size_t *out_length);
/* Decodes `length` characters into `out` (room for length / 4 * 3 bytes; `out` may be `text`);
 * false for malformed text (bad characters, length not a multiple of 4, misplaced padding). */
bool helix_base64_decode(const char *text, size_t length, void *out, size_t *out_length);

/* Longest line helix_reader_next_line returns (longer lines fail with I-REQ-TOO-LARGE). */
#define HELIX_DEFAULT_MAX_LINE_LENGTH (1024 * 1024)

/* Streams an artifact piece by piece (1 MiB reads on the bulk path: the manifest must say
 * capabilities.abiVersion: 2); lines end at LF, a CR before it is dropped. */
typedef struct helix_artifact_reader {
  helix_status status;
  char artifact_id[40];
  bool decompress;
  bool bytes;          /* kept for compatibility: bulk pieces are raw bytes either way */
  int32_t piece_length;
  size_t max_line_length;
  int64_t offset;      /* where the next read starts */
  int64_t line_number; /* lines returned so far */
  bool eof;            /* the host said eof */
  bool done;           /* everything returned */
  helix_artifact_piece piece;
  bool have_piece;
  size_t position;     /* in piece.data */
  char *line;          /* a line that spans pieces */
  size_t line_length;
  size_t line_capacity;
  char *buffer;        /* the bulk reads' buffer, piece_length bytes */
  int32_t buffer_length;
} helix_artifact_reader;
void helix_reader_init(helix_artifact_reader *r, const char *artifact_id, bool decompress);
/* The next piece as it came; false at the end or on failure (check r->status.ok). */
bool helix_reader_next_piece(helix_artifact_reader *r, const char **data, size_t *length);
/* The next line without its LF (and CR); valid until the next call. False at the end or on failure. */
bool helix_reader_next_line(helix_artifact_reader *r, const char **line, size_t *length);
void helix_reader_close(helix_artifact_reader *r);

/* Bytes buffered before one artifact.write piece is sent. */
#define HELIX_WRITE_PIECE_BYTES (512 * 1024)
/* Buffers text and sends it as artifact.write pieces under a declared role. */
typedef struct helix_artifact_writer {
  helix_status status;
  char role[64];
  char type[64];
  char label[201];
  char *buffer;
  size_t length;
  size_t escaped; /* length of the buffer once escaped as a JSON string */
  int32_t pieces_sent;
  int64_t size;   /* bytes accepted so far */
  bool bytes;     /* set before the first write: any bytes, sent base64-encoded, for binary data */
  bool finished;
  helix_artifact_written written; /* after finish: artifact_id, sha256, size */
  /* helix_artifact_write_from when made by helix_awriter_init_bulk (internal). */
  helix_status (*bulk_send)(const char *, const void *, size_t, bool, const char *, const char *, helix_artifact_written *);
} helix_artifact_writer;
void helix_awriter_init(helix_artifact_writer *w, const char *role, const char *type, const char *label);
/* The same writer on the bulk path (the manifest must say capabilities.abiVersion: 2): each piece
 * goes as raw bytes straight from the writer's buffer, neither escaped into JSON text nor
 * copied into a request, so writing costs a copy of the bytes and the writer holds its buffer
 * alone. Text pieces still never split a character. A module links the bulk import only when
 * it calls this. */
void helix_awriter_init_bulk(helix_artifact_writer *w, const char *role, const char *type, const char *label);
bool helix_awriter_write(helix_artifact_writer *w, const char *data, size_t length);
bool helix_awriter_write_string(helix_artifact_writer *w, const char *text);
/* `data` then a LF. */
bool helix_awriter_write_line(helix_artifact_writer *w, const char *data, size_t length);
bool helix_awriter_flush(helix_artifact_writer *w);
/* Sends the last piece with final; the new artifact id, or NULL on failure (check w->status). */
const char *helix_awriter_finish(helix_artifact_writer *w);

typedef struct helix_http_response {
  int32_t status;          /* the HTTP status; a 4xx/5xx is still an ok call */
  const helix_value *headers; /* object of lower-case names */
  const char *body;
  size_t body_length;
  const char *body_encoding; /* "utf8" or "base64" */
  const char *url;         /* after redirects */
  helix_reply reply;       /* owns everything */
} helix_http_response;
/* http.request: method GET HEAD POST PUT PATCH DELETE; headers_json an object of strings or NULL;
 * body NULL for none; body_encoding "utf8"/"base64" or NULL; max_response_bytes 0 for the default. */
helix_status helix_http_request(const char *method, const char *url, const char *headers_json, const char *body,
                                const char *body_encoding, int64_t max_response_bytes, helix_http_response *out);
helix_status helix_http_get(const char *url, const char *headers_json, helix_http_response *out);
/* Header value by name, any case, or NULL. */
const char *helix_http_header(const helix_http_response *response, const char *name);

typedef struct helix_secret {
  const char *value; /* never log it or put it in an output */
  helix_reply reply;
} helix_secret;
/* secrets.get: the allowlist must hold secrets.get.<name>. */
helix_status helix_secrets_get(const char *name, helix_secret *out);

/* ---- FASTA/FASTQ records ------------------------------------------------------------------ */

/* The format a helix_seq_reader detected (NONE until the first record, and for data without
 * one), or the one format it is restricted to (helix_seq_init_format). */
typedef enum helix_seq_format { HELIX_SEQ_NONE, HELIX_SEQ_FASTA, HELIX_SEQ_FASTQ } helix_seq_format;
/* What helix_seq_next_part delivered, as the AssemblyScript SDK's SeqPart. */
typedef enum helix_seq_part {
  HELIX_SEQ_END,        /* no more records, or an error (check status.ok) */
  HELIX_SEQ_HEADER,     /* a piece of the header line after '>' or '@'; the first piece starts a record */
  HELIX_SEQ_SEQUENCE,   /* a piece of a sequence line, without its line end (never empty) */
  HELIX_SEQ_QUALITY,    /* FASTQ: a piece of the quality line (never empty) */
  HELIX_SEQ_RECORD_END, /* the record is complete: sequence_length and quality_length are its totals */
} helix_seq_part;
/* Longest sequence (and quality) a record may have when helix_seq_next keeps it: 64 MiB. */
#define HELIX_SEQ_DEFAULT_MAX_RECORD_BYTES (64 * 1024 * 1024)
/* Longest header helix_seq_next keeps (bytes after '>' or '@'). */
#define HELIX_SEQ_MAX_HEADER_BYTES (1024 * 1024)
/* Hints of the reader's D-DATA-FORMAT errors: either format, FASTA only, FASTQ only. */
#define HELIX_SEQ_FORMAT_HINT                                                                                      \
  "pass FASTA ('>' header lines, each followed by sequence lines) or FASTQ (4-line records: '@' header, sequence, " \
  "'+' line, quality of the same length, phred+33 '!'..'~'), plain or gzip"
#define HELIX_SEQ_FASTA_HINT "pass FASTA ('>' header lines, each followed by sequence lines), plain or gzip"
#define HELIX_SEQ_FASTQ_HINT \
  "pass FASTQ (4-line records: '@' header, sequence, '+' line, quality of the same length, phred+33 '!'..'~'), plain or gzip"

/* Reads FASTA or FASTQ records from an artifact, streaming: the same semantics, parts and error
 * texts as the AssemblyScript SDK's SeqReader. The format is detected from the first non-blank
 * byte ('>' FASTA, '@' FASTQ), or fixed with helix_seq_init_format. FASTA: a record is a '>'
 * line and the lines up to the next '>' line; its sequence is those lines joined without line
 * ends (LF or CR LF), kept byte for byte as seqkit keeps it (case, gaps, spaces inside lines;
 * blank lines add nothing); a record may have no sequence. FASTQ: 4-line records ('@' header,
 * sequence, '+' line, quality as long as the sequence and made of '!'..'~'); blank lines between
 * records are skipped; multi-line FASTQ is refused. Before the first record only blank lines may
 * appear. Errors stop the reader: D-DATA-FORMAT with details artifact_id, line (1-based), record
 * and format; I-REQ-TOO-LARGE for a record over max_record_bytes (helix_seq_next only); a failed
 * read keeps the capability's code. The data is read in pieces of source.piece_length bytes
 * (1 MiB) on the bulk path (capabilities.abiVersion 2); gzip is decompressed by the host (pass
 * info.is_gzip as `decompress`).
 *
 * Two ways to read, not to be mixed within a record:
 *   parts   helix_seq_next_part: the header, sequence and quality a line (or a piece of a long
 *           line) at a time, as pointers into the read buffer (part_ptr, part_len), valid until
 *           the next call. Nothing is copied or held, so a record of any length is read while
 *           one piece is held, at the lowest cost per byte.
 *   records helix_seq_next: one whole record at a time (header, id, sequence, quality), copied
 *           into the reader's buffers, or pointing into the read buffer when a FASTQ record is
 *           whole in it. */
/* A growable byte buffer of the reader (internal). */
typedef struct helix__seq_buf {
  char *data;
  size_t length, capacity;
} helix__seq_buf;

typedef struct helix_seq_reader {
  helix_status status;          /* ok, or why the reader stopped */
  helix_artifact_reader source; /* set source.piece_length before the first record to read smaller pieces */
  helix_seq_format format;      /* FASTA or FASTQ once the first record has started */
  helix_seq_format only;        /* the one format accepted (helix_seq_init_format), or NONE for either */
  int64_t records;              /* records started: the number (1-based) of the current one */
  /* The part helix_seq_next_part delivered: its bytes (not NUL-terminated), valid until the next call. */
  const char *part_ptr;
  size_t part_len;
  bool part_ends_line;          /* the part ends its line (for HEADER: the end of the header) */
  int64_t sequence_length;      /* sequence bytes of the current record so far; its total at RECORD_END and after helix_seq_next */
  int64_t quality_length;       /* FASTQ: quality bytes so far */
  int64_t record_line;          /* line of the current record's header */
  /* helix_seq_next: what it keeps, and the record (valid until the next call). */
  bool keep_sequence;           /* default true; false: sequence and quality are counted, not kept (NULL) */
  size_t max_record_bytes;      /* longest kept sequence or quality (default 64 MiB) */
  const char *header;           /* the header line after '>' or '@', NUL-terminated */
  size_t header_length;
  const char *id;               /* the header up to the first space or tab (id_length bytes, not NUL-terminated) */
  size_t id_length;
  const char *description;      /* the rest of the header after the blanks that follow the id, NUL-terminated */
  const char *sequence;         /* NUL-terminated; NULL when keep_sequence is false */
  const char *quality;          /* FASTQ; NUL-terminated; NULL for FASTA or when keep_sequence is false */
  /* Internal state. */
  int state, blank_return;
  int64_t lines_done;           /* lines fully read */
  int64_t column;               /* bytes of the current line before the current line piece */
  bool line_start, cr_pending, line_open, held, own_error, end_pending;
  const char *line_ptr;         /* the current line piece from the source */
  size_t line_len;
  bool line_ends, line_starts;
  const char *queued_sequence, *queued_quality; /* a FASTQ record taken whole from the read buffer */
  size_t queued_length;
  helix__seq_buf header_buf, sequence_buf, quality_buf;
} helix_seq_reader;
/* A reader of either format. */
void helix_seq_init(helix_seq_reader *r, const char *artifact_id, bool decompress);
/* A reader of one format (HELIX_SEQ_FASTA or HELIX_SEQ_FASTQ): data in the other is refused with
 * D-DATA-FORMAT at its first header ("not FASTQ: line 1: expected a '@' header line, found '>'
 * ..."), and every error's hint names that format only. HELIX_SEQ_NONE: either. */
void helix_seq_init_format(helix_seq_reader *r, const char *artifact_id, bool decompress, helix_seq_format only);
/* The next part; HELIX_SEQ_END at the end or on error (check status.ok). */
helix_seq_part helix_seq_next_part(helix_seq_reader *r);
/* The next whole record: true with the record's fields set; false at the end or on error (check r->status.ok). */
bool helix_seq_next(helix_seq_reader *r);
/* "FASTA", "FASTQ", or "" before the first record. */
const char *helix_seq_format_name(const helix_seq_reader *r);
/* The failure as the tool's error: the reader's own errors (D-DATA-FORMAT, I-REQ-TOO-LARGE) keep
 * their code, read failures are passed on as helix_status_to_result does. */
helix_result helix_seq_to_result(const helix_seq_reader *r, const char *context);
/* Frees the buffers and the piece held (also done at the end; call it when stopping early). */
void helix_seq_close(helix_seq_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* HELIX_H */

/* ========================================================================================= */
#ifdef HELIX_IMPLEMENTATION
#ifndef HELIX_IMPLEMENTATION_DONE
#define HELIX_IMPLEMENTATION_DONE

/* ---- memory: power-of-two size classes with free lists, bumped from __heap_base --------- */

/* Compiler-generated copies and fills call these; bulk-memory instructions do the work. */
void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
  __builtin_memcpy(dst, src, n);
  return dst;
}
void *memmove(void *dst, const void *src, size_t n) {
  __builtin_memmove(dst, src, n);
  return dst;
}
void *memset(void *dst, int c, size_t n) {
  __builtin_memset(dst, c, n);
  return dst;
}
int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

extern unsigned char __heap_base;
/* A block is 2^class bytes: an 8-byte header holding the class, then the payload. Freed blocks
 * go to their class's list and are reused whole; one call is short-lived, so no coalescing. */
#define HELIX__HEADER 8u
#define HELIX__MIN_CLASS 4u
#define HELIX__MAX_CLASS 31u
static uintptr_t helix__heap_top;
static void *helix__free_lists[HELIX__MAX_CLASS + 1];

void *helix_try_malloc(size_t size) {
  if (size > ((size_t)1 << HELIX__MAX_CLASS) - HELIX__HEADER) return NULL;
  size_t need = size + HELIX__HEADER;
  uint32_t cls = HELIX__MIN_CLASS;
  while (((size_t)1 << cls) < need) cls++;
  unsigned char *block = (unsigned char *)helix__free_lists[cls];
  if (block) {
    helix__free_lists[cls] = *(void **)(block + HELIX__HEADER);
  } else {
    if (helix__heap_top == 0) helix__heap_top = ((uintptr_t)&__heap_base + 15u) & ~(uintptr_t)15u;
    uintptr_t end = helix__heap_top + ((uintptr_t)1 << cls);
    if (end < helix__heap_top) return NULL;
    uintptr_t limit = (uintptr_t)__builtin_wasm_memory_size(0) * 65536u;
    if (end > limit) {
      size_t pages = (size_t)((end - limit + 65535u) / 65536u);
      if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) return NULL;
    }
    block = (unsigned char *)helix__heap_top;
    helix__heap_top = end;
  }
  *(uint32_t *)block = cls;
  return block + HELIX__HEADER;
}

void *helix_malloc(size_t size) {
  void *p = helix_try_malloc(size);
  if (!p) helix_abort("out of memory");
  return p;
}

void *helix_calloc(size_t count, size_t size) {
  if (size != 0 && count > (size_t)-1 / size) helix_abort("out of memory");
  void *p = helix_malloc(count * size);
  __builtin_memset(p, 0, count * size);
  return p;
}

void helix_free(void *ptr) {
  if (!ptr) return;
  unsigned char *block = (unsigned char *)ptr - HELIX__HEADER;
  uint32_t cls = *(uint32_t *)block;
  if (cls < HELIX__MIN_CLASS || cls > HELIX__MAX_CLASS) helix_abort("helix_free: not a block from helix_malloc");
  *(void **)ptr = helix__free_lists[cls];
  helix__free_lists[cls] = block;
}

void *helix_realloc(void *ptr, size_t size) {
  if (!ptr) return helix_malloc(size);
  uint32_t cls = *(uint32_t *)((unsigned char *)ptr - HELIX__HEADER);
  size_t capacity = ((size_t)1 << cls) - HELIX__HEADER;
  if (size <= capacity) return ptr;
  void *next = helix_malloc(size);
  __builtin_memcpy(next, ptr, capacity);
  helix_free(ptr);
  return next;
}

size_t helix_strlen(const char *text) {
  size_t n = 0;
  while (text[n]) n++;
  return n;
}

int helix_strcmp(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return (unsigned char)*a - (unsigned char)*b;
}

static bool helix__str_eq_n(const char *a, size_t length, const char *b) {
  for (size_t i = 0; i < length; i++)
    if (b[i] == 0 || a[i] != b[i]) return false;
  return b[length] == 0;
}

static bool helix__starts_with(const char *text, const char *prefix) {
  while (*prefix)
    if (*text++ != *prefix++) return false;
  return true;
}

char *helix_strndup(const char *text, size_t length) {
  char *copy = (char *)helix_malloc(length + 1);
  __builtin_memcpy(copy, text, length);
  copy[length] = 0;
  return copy;
}

char *helix_strdup(const char *text) { return helix_strndup(text, helix_strlen(text)); }

/* ---- ABI exports and panics ------------------------------------------------------------- */

/* A static region, so recording a panic never allocates (it may be an out-of-memory panic). */
static char helix__panic_buffer[HELIX_PANIC_CAPACITY];
static uint32_t helix__panic_length;
static bool helix__panicking;

__attribute__((export_name("alloc"))) int32_t helix__alloc(int32_t length) {
  /* A null pointer would make the host write the input over the stack: trap instead. */
  return (int32_t)(uintptr_t)helix_malloc((size_t)(uint32_t)length);
}

__attribute__((export_name("dealloc"))) void helix__dealloc(int32_t ptr, int32_t length) {
  (void)length;
  helix_free((void *)(uintptr_t)ptr);
}

__attribute__((export_name("helix_panic"))) int64_t helix__panic(void) {
  if (helix__panic_length == 0) return 0;
  return (int64_t)(((uint64_t)(uintptr_t)helix__panic_buffer << 32) | helix__panic_length);
}

/* Appends UTF-8 text, whole characters only, so a cut message stays valid UTF-8. */
static void helix__panic_append(const char *text) {
  for (size_t i = 0; text[i];) {
    unsigned char lead = (unsigned char)text[i];
    size_t size = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (helix__panic_length + size > HELIX_PANIC_CAPACITY) return;
    for (size_t k = 0; k < size && text[i]; k++) helix__panic_buffer[helix__panic_length++] = text[i++];
  }
}

void helix_abort(const char *message) {
  /* A second abort while recording must not loop. */
  if (!helix__panicking) {
    helix__panicking = true;
    helix__panic_length = 0;
    helix__panic_append(message && *message ? message : "abort");
  }
  __builtin_trap();
}

/* ---- formatting ---------------------------------------------------------------------------- */

typedef struct helix__buf {
  char *data;
  size_t length, capacity;
} helix__buf;

static void helix__reserve(helix__buf *b, size_t extra) {
  if (b->length + extra + 1 <= b->capacity) return;
  /* Capacities a block header short of a power of two: helix_malloc rounds a request and its
   * header up to a power of two, so a power-of-two capacity would take a block twice its size. */
  size_t capacity = b->capacity < 64 - HELIX__HEADER ? 64 - HELIX__HEADER : b->capacity;
  while (capacity < b->length + extra + 1) capacity = capacity * 2 + HELIX__HEADER;
  b->data = (char *)helix_realloc(b->data, capacity);
  b->capacity = capacity;
}

static void helix__append(helix__buf *b, const char *text, size_t length) {
  helix__reserve(b, length);
  __builtin_memcpy(b->data + b->length, text, length);
  b->length += length;
  b->data[b->length] = 0;
}

static void helix__append_char(helix__buf *b, char c) { helix__append(b, &c, 1); }
/* A string literal, its length counted by the compiler. */
#define helix__append_literal(b, literal) helix__append((b), (literal), sizeof(literal) - 1)

static void helix__append_u64(helix__buf *b, uint64_t value, uint32_t base) {
  char digits[24];
  size_t n = 0;
  do {
    uint32_t d = (uint32_t)(value % base);
    digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    value /= base;
  } while (value);
  helix__reserve(b, n);
  while (n) b->data[b->length++] = digits[--n];
  b->data[b->length] = 0;
}

static void helix__append_i64(helix__buf *b, int64_t value) {
  if (value < 0) {
    helix__append_char(b, '-');
    helix__append_u64(b, (uint64_t)0 - (uint64_t)value, 10);
  } else {
    helix__append_u64(b, (uint64_t)value, 10);
  }
}

static void helix__append_double(helix__buf *b, double x);

char *helix_vformat(const char *format, va_list args) {
  helix__buf b = {0, 0, 0};
  helix__reserve(&b, 0);
  b.data[0] = 0;
  for (const char *p = format; *p; p++) {
    if (*p != '%') {
      helix__append_char(&b, *p);
      continue;
    }
    p++;
    int precision = -1;
    if (p[0] == '.' && p[1] == '*') {
      precision = va_arg(args, int);
      p += 2;
    }
    int longs = 0;
    bool size_t_arg = false;
    while (*p == 'l') longs++, p++;
    if (*p == 'z') size_t_arg = true, p++;
    switch (*p) {
      case 's': {
        const char *s = va_arg(args, const char *);
        if (!s) s = "(null)";
        size_t n = 0;
        while ((precision < 0 || n < (size_t)precision) && s[n]) n++;
        helix__append(&b, s, n);
        break;
      }
      case 'd':
      case 'i':
        helix__append_i64(&b, longs >= 2 ? va_arg(args, long long) : longs == 1 ? va_arg(args, long) : va_arg(args, int));
        break;
      case 'u':
      case 'x': {
        uint64_t v = size_t_arg    ? va_arg(args, size_t)
                     : longs >= 2 ? va_arg(args, unsigned long long)
                     : longs == 1 ? va_arg(args, unsigned long)
                                  : va_arg(args, unsigned int);
        helix__append_u64(&b, v, *p == 'x' ? 16 : 10);
        break;
      }
      case 'g': helix__append_double(&b, va_arg(args, double)); break;
      case 'c': helix__append_char(&b, (char)va_arg(args, int)); break;
      case '%': helix__append_char(&b, '%'); break;
      case 0: p--; break;
      default: helix_abortf("helix_format: unsupported conversion %%%c", *p);
    }
  }
  return b.data;
}

char *helix_format(const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *text = helix_vformat(format, args);
  va_end(args);
  return text;
}

void helix_abortf(const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *text = helix__panicking ? 0 : helix_vformat(format, args);
  va_end(args);
  helix_abort(text);
}

void helix__assert_fail(const char *condition, const char *file, int line) {
  helix_abortf("assertion failed: %s at %s:%d", condition, file, line);
}

/* ---- big integers: exact decimal <-> binary conversion -------------------------------------- */

/* Enough for every comparison the parser makes (about 2,700 bits) and every double's exact
 * decimal expansion (about 2,550 bits). */
#define HELIX__BIG_LIMBS 128
typedef struct helix__big {
  uint32_t n;
  uint32_t d[HELIX__BIG_LIMBS];
} helix__big;

static void helix__big_set(helix__big *b, uint64_t v) {
  b->n = 0;
  while (v) b->d[b->n++] = (uint32_t)v, v >>= 32;
}

static void helix__big_mul_add(helix__big *b, uint32_t m, uint32_t a) {
  uint64_t carry = a;
  for (uint32_t i = 0; i < b->n; i++) {
    uint64_t t = (uint64_t)b->d[i] * m + carry;
    b->d[i] = (uint32_t)t;
    carry = t >> 32;
  }
  if (carry) {
    if (b->n >= HELIX__BIG_LIMBS) helix_abort("helix: number too large to convert");
    b->d[b->n++] = (uint32_t)carry;
  }
}

static void helix__big_pow5(helix__big *b, uint32_t e) {
  while (e >= 13) helix__big_mul_add(b, 1220703125u, 0), e -= 13; /* 5^13 */
  uint32_t p = 1;
  while (e--) p *= 5;
  helix__big_mul_add(b, p, 0);
}

static void helix__big_shl(helix__big *b, uint32_t bits) {
  if (b->n == 0) return;
  uint32_t words = bits / 32, rest = bits % 32;
  if (b->n + words + 1 > HELIX__BIG_LIMBS) helix_abort("helix: number too large to convert");
  b->d[b->n + words] = 0;
  for (int32_t i = (int32_t)b->n - 1; i >= 0; i--) {
    uint32_t v = b->d[i];
    b->d[i + words + 1] |= rest ? v >> (32 - rest) : 0;
    b->d[i + words] = v << rest;
  }
  for (uint32_t i = 0; i < words; i++) b->d[i] = 0;
  b->n += words + 1;
  while (b->n && b->d[b->n - 1] == 0) b->n--;
}

static int helix__big_cmp(const helix__big *a, const helix__big *b) {
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  for (int32_t i = (int32_t)a->n - 1; i >= 0; i--)
    if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

static uint32_t helix__big_divmod(helix__big *b, uint32_t divisor) {
  uint64_t rem = 0;
  for (int32_t i = (int32_t)b->n - 1; i >= 0; i--) {
    uint64_t cur = (rem << 32) | b->d[i];
    b->d[i] = (uint32_t)(cur / divisor);
    rem = cur % divisor;
  }
  while (b->n && b->d[b->n - 1] == 0) b->n--;
  return (uint32_t)rem;
}

static uint64_t helix__bits(double x) { return __builtin_bit_cast(uint64_t, x); }
static double helix__from_bits(uint64_t b) { return __builtin_bit_cast(double, b); }

/* x (finite, >= 0) as m * 2^q with m an integer. */
static void helix__decompose(double x, uint64_t *m, int32_t *q) {
  uint64_t bits = helix__bits(x);
  uint32_t biased = (uint32_t)(bits >> 52) & 0x7ff;
  uint64_t frac = bits & 0xfffffffffffffull;
  if (biased == 0) *m = frac, *q = -1074;
  else *m = frac | (1ull << 52), *q = (int32_t)biased - 1075;
}

/* Compares digits * 10^e10 (+ a sticky remainder) with mant * 2^e2. */
static int helix__cmp_decimal(const helix__big *digits, bool sticky, int32_t e10, uint64_t mant, int32_t e2) {
  helix__big left = *digits, right;
  helix__big_set(&right, mant);
  int32_t lbin = 0, rbin = e2;
  if (e10 >= 0) helix__big_pow5(&left, (uint32_t)e10), lbin = e10;
  else helix__big_pow5(&right, (uint32_t)-e10), rbin = e2 - e10;
  if (lbin > rbin) helix__big_shl(&left, (uint32_t)(lbin - rbin));
  else if (rbin > lbin) helix__big_shl(&right, (uint32_t)(rbin - lbin));
  int c = helix__big_cmp(&left, &right);
  return c == 0 && sticky ? 1 : c;
}

static const double helix__pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The double nearest to the decimal digits[0..count) * 10^e10 (ties to even). `digits` are
 * ASCII '0'-'9' without leading zeros; at most 780 are used, the rest only as "more than". */
static double helix__decimal_to_double(const char *digits, size_t count, int32_t e10) {
  while (count > 0 && digits[count - 1] == '0') count--, e10++;
  if (count == 0) return 0.0;
  if ((int64_t)e10 + (int64_t)count > 310) return __builtin_inf();
  if ((int64_t)e10 + (int64_t)count < -324) return 0.0;
  uint64_t w = 0;
  size_t head = count < 19 ? count : 19;
  for (size_t i = 0; i < head; i++) w = w * 10 + (uint64_t)(digits[i] - '0');
  /* Exact when the digits fit in 53 bits and the power of ten is exact (Clinger's fast path). */
  if (count <= 15 && e10 >= -22 && e10 <= 22) return e10 >= 0 ? (double)w * helix__pow10[e10] : (double)w / helix__pow10[-e10];
  /* Otherwise an estimate within a few units in the last place, then exact comparisons with
   * the halfway points around it move it to the correctly rounded double. */
  int32_t e = e10 + (int32_t)(count - head);
  double x = (double)w;
  if (e > 0) {
    while (e > 22 && x < 1e308) x *= 1e22, e -= 22;
    x *= helix__pow10[e > 22 ? 22 : e];
  } else if (e < 0) {
    while (e < -22 && x > 0) x /= 1e22, e += 22;
    x /= helix__pow10[-e];
  }
  if (x > 1.7976931348623157e308) x = 1.7976931348623157e308;
  size_t used = count > 780 ? 780 : count;
  bool sticky = false;
  for (size_t i = used; i < count; i++)
    if (digits[i] != '0') sticky = true;
  helix__big big;
  helix__big_set(&big, 0);
  for (size_t i = 0; i < used; i++) {
    if (big.n == 0) helix__big_set(&big, (uint64_t)(digits[i] - '0'));
    else helix__big_mul_add(&big, 10, (uint32_t)(digits[i] - '0'));
  }
  int32_t exp = e10 + (int32_t)(count - used);
  for (int guard = 0; guard < 4096; guard++) {
    uint64_t m;
    int32_t q;
    helix__decompose(x, &m, &q);
    /* Above the halfway point to the next double (a tie goes to the even one)? */
    int up = helix__cmp_decimal(&big, sticky, exp, 2 * m + 1, q - 1);
    if (up > 0 || (up == 0 && (m & 1))) {
      if (x == 1.7976931348623157e308) return __builtin_inf();
      x = helix__from_bits(helix__bits(x) + 1);
      continue;
    }
    if (x == 0) return x;
    /* Below the halfway point to the previous one? Below a power of two the gap halves. */
    bool pow2 = m == (1ull << 52) && q > -1074;
    int down = pow2 ? helix__cmp_decimal(&big, sticky, exp, 4 * m - 1, q - 2) : helix__cmp_decimal(&big, sticky, exp, 2 * m - 1, q - 1);
    if (down < 0 || (down == 0 && (m & 1))) {
      x = helix__from_bits(helix__bits(x) - 1);
      continue;
    }
    return x;
  }
  helix_abort("helix: decimal conversion did not converge");
}

/* The exact decimal expansion of finite x > 0: digits (no leading zeros) and the decimal
 * exponent `point` such that x = 0.digits * 10^point. Returns the digit count. */
static size_t helix__exact_digits(double x, char *out, size_t capacity, int32_t *point) {
  uint64_t m;
  int32_t q;
  helix__decompose(x, &m, &q);
  helix__big big;
  helix__big_set(&big, m);
  int32_t frac_digits = 0;
  if (q >= 0) helix__big_shl(&big, (uint32_t)q);
  else helix__big_pow5(&big, (uint32_t)-q), frac_digits = -q; /* m*2^q = m*5^-q / 10^-q */
  char tmp[1200];
  size_t n = 0;
  while (big.n) {
    uint32_t chunk = helix__big_divmod(&big, 1000000000u);
    for (int k = 0; k < 9; k++) tmp[n++] = (char)('0' + chunk % 10), chunk /= 10;
  }
  while (n > 0 && tmp[n - 1] == '0') n--;
  size_t count = 0;
  for (size_t i = n; i > 0 && count < capacity; i--) out[count++] = tmp[i - 1];
  *point = (int32_t)n - frac_digits;
  return count;
}

/* Writes finite x the way JSON.stringify does: the shortest digits that read back as x. */
static void helix__append_double(helix__buf *b, double x) {
  if (x != x || x == __builtin_inf() || x == -__builtin_inf()) helix_abort("helix_w_number: NaN and Infinity have no JSON form");
  if (x == 0) {
    helix__append_char(b, '0');
    return;
  }
  if (x < 0) helix__append_char(b, '-'), x = -x;
  static char exact[1200];
  int32_t point;
  size_t n = helix__exact_digits(x, exact, sizeof exact, &point);
  char digits[20];
  size_t k = 1;
  int32_t kpoint = point;
  for (; k <= 17; k++) {
    /* Round the exact expansion to k digits, half to even. */
    size_t take = k < n ? k : n;
    __builtin_memcpy(digits, exact, take);
    kpoint = point;
    if (k < n) {
      int cmp = exact[k] > '5' ? 1 : exact[k] < '5' ? -1 : 0;
      if (cmp == 0) {
        for (size_t i = k + 1; i < n; i++)
          if (exact[i] != '0') cmp = 1;
        if (cmp == 0) cmp = ((digits[k - 1] - '0') & 1) ? 1 : -1;
      }
      if (cmp > 0) {
        size_t i = k;
        while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
        if (i == 0) digits[0] = '1', kpoint++;
        else digits[i - 1]++;
      }
    }
    size_t len = take;
    while (len > 1 && digits[len - 1] == '0') len--;
    if (k >= n || helix__decimal_to_double(digits, len, kpoint - (int32_t)len) == x) {
      take = len;
      k = take;
      break;
    }
  }
  size_t len = k;
  while (len > 1 && digits[len - 1] == '0') len--;
  /* Layout as ECMAScript's Number::toString: value = 0.digits * 10^kpoint. */
  int32_t np = kpoint;
  if ((int32_t)len <= np && np <= 21) {
    helix__append(b, digits, len);
    for (int32_t i = (int32_t)len; i < np; i++) helix__append_char(b, '0');
  } else if (0 < np && np <= 21) {
    helix__append(b, digits, (size_t)np);
    helix__append_char(b, '.');
    helix__append(b, digits + np, len - (size_t)np);
  } else if (-6 < np && np <= 0) {
    helix__append_literal(b, "0.");
    for (int32_t i = 0; i < -np; i++) helix__append_char(b, '0');
    helix__append(b, digits, len);
  } else {
    helix__append_char(b, digits[0]);
    if (len > 1) helix__append_char(b, '.'), helix__append(b, digits + 1, len - 1);
    helix__append_char(b, 'e');
    helix__append_char(b, np - 1 >= 0 ? '+' : '-');
    helix__append_u64(b, (uint64_t)(np - 1 >= 0 ? np - 1 : 1 - np), 10);
  }
}

/* ---- eight bytes at a time --------------------------------------------------------------------
 * Fuel is charged per instruction, so the hot scans (string bodies, line ends) test eight
 * bytes per step with the classic has-zero-byte trick instead of one byte per step. */

#define HELIX__ONES 0x0101010101010101ull
#define HELIX__HIGHS 0x8080808080808080ull

static uint64_t helix__load8(const char *p) {
  uint64_t v;
  __builtin_memcpy(&v, p, 8);
  return v;
}

/* Nonzero when some byte of v equals b (bytes below 0x80). */
static uint64_t helix__has_byte(uint64_t v, unsigned char b) {
  uint64_t x = v ^ (HELIX__ONES * b);
  return (x - HELIX__ONES) & ~x & HELIX__HIGHS;
}

/* Offset of the first byte at or after `from` in text[0..length) that a JSON string body cannot
 * hold as it is: a quote, a backslash, a control character or a non-ASCII byte. */
static size_t helix__scan_plain(const char *text, size_t from, size_t length) {
  size_t i = from;
  while (i + 8 <= length) {
    uint64_t v = helix__load8(text + i);
    uint64_t special = (v & HELIX__HIGHS) | ((v - HELIX__ONES * 0x20) & ~v & HELIX__HIGHS) | helix__has_byte(v, '"') | helix__has_byte(v, '\\');
    if (special) break;
    i += 8;
  }
  while (i < length) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
    i++;
  }
  return i;
}

/* Offset of the first `byte` (below 0x80) at or after `from` in text[0..length), or length. */
static size_t helix__scan_byte(const char *text, size_t from, size_t length, unsigned char byte) {
  size_t i = from;
  while (i + 8 <= length && !helix__has_byte(helix__load8(text + i), byte)) i += 8;
  while (i < length && (unsigned char)text[i] != byte) i++;
  return i;
}

/* ---- JSON parser ---------------------------------------------------------------------------- */

typedef struct helix__arena_block {
  struct helix__arena_block *next;
  size_t used, capacity;
} helix__arena_block;

static void *helix__arena_alloc(helix_doc *doc, size_t size) {
  size = (size + 7u) & ~(size_t)7u;
  helix__arena_block *block = (helix__arena_block *)doc->arena;
  if (!block || block->used + size > block->capacity) {
    size_t capacity = size > 16384 ? size : 16384;
    helix__arena_block *fresh = (helix__arena_block *)helix_malloc(sizeof(helix__arena_block) + capacity);
    fresh->next = block;
    fresh->used = 0;
    fresh->capacity = capacity;
    doc->arena = block = fresh;
  }
  void *p = (char *)(block + 1) + block->used;
  block->used += size;
  return p;
}

typedef struct helix__parser {
  char *text;
  size_t length, index;
  uint32_t depth, max_depth;
  helix_doc *doc;
  helix_member *stack; /* members of the open containers, innermost last */
  size_t stack_length, stack_capacity;
  const char *error;
  size_t error_offset;
} helix__parser;

static helix_value *helix__fail(helix__parser *p, const char *message, size_t offset) {
  if (!p->error) p->error = message, p->error_offset = offset;
  return 0;
}

static void helix__skip_ws(helix__parser *p) {
  while (p->index < p->length) {
    char c = p->text[p->index];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
    p->index++;
  }
}

static helix_value *helix__node(helix__parser *p, helix_kind kind) {
  helix_value *v = (helix_value *)helix__arena_alloc(p->doc, sizeof(helix_value));
  __builtin_memset(v, 0, sizeof *v);
  v->kind = kind;
  return v;
}

static int helix__hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static size_t helix__put_utf8(char *out, uint32_t code) {
  if (code < 0x80) return out[0] = (char)code, 1;
  if (code < 0x800) return out[0] = (char)(0xc0 | (code >> 6)), out[1] = (char)(0x80 | (code & 0x3f)), 2;
  if (code < 0x10000) {
    out[0] = (char)(0xe0 | (code >> 12)), out[1] = (char)(0x80 | ((code >> 6) & 0x3f)), out[2] = (char)(0x80 | (code & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (code >> 18)), out[1] = (char)(0x80 | ((code >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((code >> 6) & 0x3f)), out[3] = (char)(0x80 | (code & 0x3f));
  return 4;
}

/* Length of the well-formed UTF-8 sequence at s[0..available), or 0 (overlong, surrogate, > U+10FFFF, cut). */
static size_t helix__utf8_length(const unsigned char *s, size_t available) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t size;
  uint32_t min, code;
  if (c >= 0xc2 && c <= 0xdf) size = 2, min = 0x80, code = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) size = 3, min = 0x800, code = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) size = 4, min = 0x10000, code = c & 0x07;
  else return 0;
  if (available < size) return 0;
  for (size_t i = 1; i < size; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    code = (code << 6) | (s[i] & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) return 0;
  return size;
}

/* Parses the string at p->index (its opening quote), unescaping in place; NUL-terminates it. */
static bool helix__parse_string(helix__parser *p, const char **out, size_t *out_length) {
  size_t read = p->index + 1, write = read;
  char *t = p->text;
  for (;;) {
    /* Plain ASCII runs, the common case, move (or, before any escape, stay) in one tight loop. */
    size_t plain = helix__scan_plain(t, read, p->length);
    if (write != read) __builtin_memmove(t + write, t + read, plain - read);
    write += plain - read;
    read = plain;
    if (read >= p->length) return helix__fail(p, "unterminated string", p->length), false;
    unsigned char c = (unsigned char)t[read];
    if (c == '"') break;
    if (c < 0x20) return helix__fail(p, "unescaped control character in a string", read), false;
    if (c == '\\') {
      if (read + 1 >= p->length) return helix__fail(p, "unterminated string", p->length), false;
      char e = t[read + 1];
      char simple = e == '"' ? '"' : e == '\\' ? '\\' : e == '/' ? '/' : e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : 0;
      if (simple) {
        t[write++] = simple;
        read += 2;
        continue;
      }
      if (e != 'u') return helix__fail(p, "invalid escape in a string", read + 1), false;
      uint32_t code = 0;
      for (int k = 0; k < 4; k++) {
        int h = read + 2 + k < p->length ? helix__hex(t[read + 2 + k]) : -1;
        if (h < 0) return helix__fail(p, "\\u escape needs four hex digits", read + 2 + k), false;
        code = code * 16 + (uint32_t)h;
      }
      read += 6;
      if (code >= 0xd800 && code < 0xdc00 && read + 5 < p->length && t[read] == '\\' && t[read + 1] == 'u') {
        uint32_t low = 0;
        int k = 0;
        for (; k < 4; k++) {
          int h = helix__hex(t[read + 2 + k]);
          if (h < 0) break;
          low = low * 16 + (uint32_t)h;
        }
        if (k == 4 && low >= 0xdc00 && low < 0xe000) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          read += 6;
        }
      }
      /* A lone surrogate has no UTF-8 form: it becomes U+FFFD. */
      if (code >= 0xd800 && code < 0xe000) code = 0xfffd;
      write += helix__put_utf8(t + write, code);
      continue;
    }
    size_t size = helix__utf8_length((const unsigned char *)t + read, p->length - read);
    if (size == 0) return helix__fail(p, "invalid UTF-8 in a string", read), false;
    for (size_t k = 0; k < size; k++) t[write++] = t[read++];
  }
  /* The unescaped text is never longer, so the terminator fits where the quote was at the latest. */
  t[write] = 0;
  *out = t + p->index + 1;
  *out_length = write - (p->index + 1);
  p->index = read + 1;
  return true;
}

static helix_value *helix__parse_value(helix__parser *p);

static helix_value *helix__parse_number(helix__parser *p) {
  size_t start = p->index, i = start;
  const char *t = p->text;
  bool negative = false;
  if (t[i] == '-') negative = true, i++;
  if (i >= p->length || t[i] < '0' || t[i] > '9') return helix__fail(p, "a number needs digits", i);
  size_t int_start = i;
  if (t[i] == '0') {
    i++;
    if (i < p->length && t[i] >= '0' && t[i] <= '9') return helix__fail(p, "leading zeros are not allowed", i);
  } else {
    while (i < p->length && t[i] >= '0' && t[i] <= '9') i++;
  }
  size_t int_end = i, frac_start = i, frac_end = i;
  bool integral = true;
  if (i < p->length && t[i] == '.') {
    integral = false;
    frac_start = ++i;
    if (i >= p->length || t[i] < '0' || t[i] > '9') return helix__fail(p, "a fraction needs digits after '.'", i);
    while (i < p->length && t[i] >= '0' && t[i] <= '9') i++;
    frac_end = i;
  }
  int64_t exponent = 0;
  if (i < p->length && (t[i] == 'e' || t[i] == 'E')) {
    integral = false;
    i++;
    bool neg_exp = false;
    if (i < p->length && (t[i] == '+' || t[i] == '-')) neg_exp = t[i] == '-', i++;
    if (i >= p->length || t[i] < '0' || t[i] > '9') return helix__fail(p, "an exponent needs digits", i);
    while (i < p->length && t[i] >= '0' && t[i] <= '9') {
      if (exponent < 100000000) exponent = exponent * 10 + (t[i] - '0'); /* clamped: far out of range already */
      i++;
    }
    if (neg_exp) exponent = -exponent;
  }
  p->index = i;
  helix_value *v = helix__node(p, HELIX_NUMBER);
  /* The significant digits, without the point and leading zeros, in scratch memory. */
  size_t total = (int_end - int_start) + (frac_end - frac_start);
  char small[64];
  char *digits = total <= sizeof small ? small : (char *)helix_malloc(total);
  size_t count = 0;
  for (size_t k = int_start; k < int_end; k++)
    if (count > 0 || t[k] != '0') digits[count++] = t[k];
  int32_t frac_len = (int32_t)(frac_end - frac_start);
  for (size_t k = frac_start; k < frac_end; k++)
    if (count > 0 || t[k] != '0') digits[count++] = t[k];
  int64_t e10 = exponent - frac_len;
  if (e10 > 100000000) e10 = 100000000;
  if (e10 < -100000000) e10 = -100000000;
  double x = helix__decimal_to_double(digits, count, (int32_t)e10);
  v->number = negative ? -x : x;
  if (integral && count <= 19) {
    uint64_t u = 0;
    for (size_t k = 0; k < count; k++) u = u * 10 + (uint64_t)(digits[k] - '0');
    bool fits = count < 19 || u <= (negative ? 9223372036854775808ull : 9223372036854775807ull);
    if (fits) v->is_integer = true, v->integer = negative ? (int64_t)((uint64_t)0 - u) : (int64_t)u;
  }
  if (digits != small) helix_free(digits);
  return v;
}

static void helix__push(helix__parser *p, const char *key, size_t key_length, helix_value *value) {
  if (p->stack_length == p->stack_capacity) {
    p->stack_capacity = p->stack_capacity ? p->stack_capacity * 2 : 32;
    p->stack = (helix_member *)helix_realloc(p->stack, p->stack_capacity * sizeof(helix_member));
  }
  helix_member *m = &p->stack[p->stack_length++];
  m->key = key, m->key_length = key_length, m->value = value;
}

/* Moves the members pushed since `base` into the arena as the container's members. */
static void helix__close(helix__parser *p, helix_value *v, size_t base) {
  v->length = p->stack_length - base;
  v->members = (helix_member *)helix__arena_alloc(p->doc, v->length * sizeof(helix_member) + 1);
  __builtin_memcpy(v->members, p->stack + base, v->length * sizeof(helix_member));
  p->stack_length = base;
}

static helix_value *helix__parse_container(helix__parser *p, bool object) {
  if (++p->depth > p->max_depth) return helix__fail(p, "nesting deeper than the limit", p->index);
  char close = object ? '}' : ']';
  helix_value *v = helix__node(p, object ? HELIX_OBJECT : HELIX_ARRAY);
  size_t base = p->stack_length;
  p->index++;
  helix__skip_ws(p);
  if (p->index < p->length && p->text[p->index] == close) {
    p->index++;
  } else {
    for (;;) {
      const char *key = 0;
      size_t key_length = 0;
      if (object) {
        if (p->index >= p->length || p->text[p->index] != '"') return helix__fail(p, "expected a string key", p->index);
        if (!helix__parse_string(p, &key, &key_length)) return 0;
        helix__skip_ws(p);
        if (p->index >= p->length || p->text[p->index] != ':') return helix__fail(p, "expected ':' after an object key", p->index);
        p->index++;
      }
      helix_value *item = helix__parse_value(p);
      if (!item) return 0;
      helix__push(p, key, key_length, item);
      helix__skip_ws(p);
      if (p->index >= p->length) return helix__fail(p, object ? "unterminated object" : "unterminated array", p->length);
      char c = p->text[p->index++];
      if (c == close) break;
      if (c != ',') return helix__fail(p, object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array", p->index - 1);
      helix__skip_ws(p);
    }
  }
  helix__close(p, v, base);
  p->depth--;
  return v;
}

static helix_value *helix__literal(helix__parser *p, const char *word, helix_kind kind, bool boolean) {
  size_t n = helix_strlen(word);
  if (p->length - p->index < n || __builtin_memcmp(p->text + p->index, word, n) != 0) return helix__fail(p, "unexpected character", p->index);
  p->index += n;
  helix_value *v = helix__node(p, kind);
  v->boolean = boolean;
  return v;
}

static helix_value *helix__parse_value(helix__parser *p) {
  helix__skip_ws(p);
  if (p->index >= p->length) return helix__fail(p, "unexpected end of input", p->index);
  char c = p->text[p->index];
  switch (c) {
    case '{': return helix__parse_container(p, true);
    case '[': return helix__parse_container(p, false);
    case '"': {
      helix_value *v = helix__node(p, HELIX_STRING);
      return helix__parse_string(p, &v->string, &v->length) ? v : 0;
    }
    case 't': return helix__literal(p, "true", HELIX_BOOL, true);
    case 'f': return helix__literal(p, "false", HELIX_BOOL, false);
    case 'n': return helix__literal(p, "null", HELIX_NULL, false);
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return helix__parse_number(p);
      return helix__fail(p, "unexpected character", p->index);
  }
}

static void helix__arena_free(helix_doc *doc) {
  helix__arena_block *block = (helix__arena_block *)doc->arena;
  while (block) {
    helix__arena_block *next = block->next;
    helix_free(block);
    block = next;
  }
  doc->arena = 0;
}

bool helix_json_parse_in_place(char *text, size_t length, bool owned, uint32_t max_depth, helix_doc *doc) {
  __builtin_memset(doc, 0, sizeof *doc);
  doc->owned = owned ? text : 0;
  helix__parser p;
  __builtin_memset(&p, 0, sizeof p);
  p.text = text, p.length = length, p.doc = doc;
  p.max_depth = max_depth ? max_depth : HELIX_DEFAULT_MAX_DEPTH;
  helix_value *root = helix__parse_value(&p);
  if (root) {
    helix__skip_ws(&p);
    if (p.index < p.length) root = helix__fail(&p, "unexpected text after the JSON value", p.index);
  }
  helix_free(p.stack);
  if (!root) {
    doc->error = p.error;
    doc->error_offset = p.error_offset;
    helix__arena_free(doc);
    return false;
  }
  doc->root = root;
  return true;
}

bool helix_json_parse(const char *text, size_t length, helix_doc *doc) {
  char *copy = helix_strndup(text, length);
  return helix_json_parse_in_place(copy, length, true, 0, doc);
}

void helix_doc_free(helix_doc *doc) {
  helix__arena_free(doc);
  helix_free(doc->owned);
  doc->owned = 0;
  doc->root = 0;
}

const helix_value *helix_get(const helix_value *object, const char *key) {
  if (!object || object->kind != HELIX_OBJECT) return 0;
  for (size_t i = object->length; i > 0; i--) {
    const helix_member *m = &object->members[i - 1];
    if (helix__str_eq_n(m->key, m->key_length, key)) return m->value;
  }
  return 0;
}

bool helix_has(const helix_value *object, const char *key) { return helix_get(object, key) != 0; }

const char *helix_get_string(const helix_value *object, const char *key) {
  const helix_value *v = helix_get(object, key);
  return v && v->kind == HELIX_STRING ? v->string : 0;
}

double helix_get_number(const helix_value *object, const char *key, double fallback) {
  const helix_value *v = helix_get(object, key);
  return v && v->kind == HELIX_NUMBER ? v->number : fallback;
}

bool helix_as_int(const helix_value *v, int64_t *out) {
  if (!v || v->kind != HELIX_NUMBER) return false;
  if (v->is_integer) return *out = v->integer, true;
  double x = v->number;
  if (x >= -9007199254740992.0 && x <= 9007199254740992.0 && (double)(int64_t)x == x) return *out = (int64_t)x, true;
  return false;
}

int64_t helix_get_int(const helix_value *object, const char *key, int64_t fallback) {
  int64_t out;
  return helix_as_int(helix_get(object, key), &out) ? out : fallback;
}

bool helix_get_bool(const helix_value *object, const char *key, bool fallback) {
  const helix_value *v = helix_get(object, key);
  return v && v->kind == HELIX_BOOL ? v->boolean : fallback;
}

const helix_value *helix_get_object(const helix_value *object, const char *key) {
  const helix_value *v = helix_get(object, key);
  return v && v->kind == HELIX_OBJECT ? v : 0;
}

const helix_value *helix_get_array(const helix_value *object, const char *key) {
  const helix_value *v = helix_get(object, key);
  return v && v->kind == HELIX_ARRAY ? v : 0;
}

const helix_value *helix_at(const helix_value *array, size_t index) {
  if (!array || array->kind != HELIX_ARRAY || index >= array->length) return 0;
  return array->members[index].value;
}

/* ---- JSON writer ------------------------------------------------------------------------------ */

/* state per level: 0 first value, 1 after a value (comma next), 2 after a key (value next). */
enum { HELIX__W_FIRST, HELIX__W_NEXT, HELIX__W_VALUE };

void helix_w_init(helix_writer *w) {
  __builtin_memset(w, 0, sizeof *w);
  helix__buf b = {0, 0, 0};
  helix__reserve(&b, 0);
  b.data[0] = 0;
  w->data = b.data, w->capacity = b.capacity;
  w->state[0] = HELIX__W_FIRST;
}

void helix_w_free(helix_writer *w) {
  helix_free(w->data);
  w->data = 0;
  w->length = w->capacity = 0;
}

static helix__buf helix__wbuf(helix_writer *w) { return (helix__buf){w->data, w->length, w->capacity}; }
static void helix__wsync(helix_writer *w, helix__buf b) { w->data = b.data, w->length = b.length, w->capacity = b.capacity; }

/* Separator before a value; objects need a key first. */
static void helix__before_value(helix_writer *w) {
  uint8_t *s = &w->state[w->depth];
  bool in_object = w->depth > 0 && (w->state[w->depth] & 0x80);
  uint8_t phase = *s & 0x7f;
  if (w->depth == 0 && phase != HELIX__W_FIRST) helix_abort("helix_writer: a document holds one value");
  if (in_object && phase != HELIX__W_VALUE) helix_abort("helix_writer: a value in an object needs a key first");
  if (!in_object && phase == HELIX__W_NEXT) {
    helix__buf b = helix__wbuf(w);
    helix__append_char(&b, ',');
    helix__wsync(w, b);
  }
  *s = (uint8_t)((*s & 0x80) | HELIX__W_NEXT);
}

static void helix__wappend(helix_writer *w, const char *text, size_t length) {
  helix__buf b = helix__wbuf(w);
  helix__append(&b, text, length);
  helix__wsync(w, b);
}

static void helix__begin(helix_writer *w, bool object) {
  helix__before_value(w);
  if (w->depth >= HELIX_DEFAULT_MAX_DEPTH) helix_abort("helix_writer: nesting deeper than 128");
  helix__wappend(w, object ? "{" : "[", 1);
  w->state[++w->depth] = (uint8_t)((object ? 0x80 : 0) | HELIX__W_FIRST);
}

static void helix__end(helix_writer *w, bool object) {
  if (w->depth == 0 || (bool)(w->state[w->depth] & 0x80) != object) helix_abort(object ? "helix_writer: end_object without begin_object" : "helix_writer: end_array without begin_array");
  if ((w->state[w->depth] & 0x7f) == HELIX__W_VALUE) helix_abort("helix_writer: a key without a value");
  w->depth--;
  helix__wappend(w, object ? "}" : "]", 1);
}

void helix_w_begin_object(helix_writer *w) { helix__begin(w, true); }
void helix_w_end_object(helix_writer *w) { helix__end(w, true); }
void helix_w_begin_array(helix_writer *w) { helix__begin(w, false); }
void helix_w_end_array(helix_writer *w) { helix__end(w, false); }

/* Appends `text` as a JSON string: escapes as JSON.stringify, invalid UTF-8 as U+FFFD. */
/* Bytes each byte takes in a JSON string: 1 as it is, 2 for the short escapes, 6 for \u00XX,
 * and 3 for a byte of 0x80 and up (U+FFFD at most, when it is not valid UTF-8). A table, so
 * measuring and copying plain text costs a load per byte rather than a chain of comparisons. */
static const unsigned char helix__quoted_widths[256] = {
    6, 6, 6, 6, 6, 6, 6, 6, 2, 2, 2, 6, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, /* 0x00-0x1f */
    1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20-0x3f: '"' */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, /* 0x40-0x5f: '\\' */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x60-0x7f */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

static void helix__append_quoted(helix__buf *b, const char *text, size_t length) {
  static const char hex[] = "0123456789abcdef";
  helix__reserve(b, length + 2);
  b->data[b->length++] = '"';
  size_t run = 0; /* start of bytes copied as they are */
  for (size_t i = 0; i < length;) {
    unsigned char c = (unsigned char)text[i];
    if (helix__quoted_widths[c] == 1) {
      i++;
      continue;
    }
    size_t size = c < 0x80 ? 1 : helix__utf8_length((const unsigned char *)text + i, length - i);
    if (c >= 0x80 && size > 0) {
      i += size;
      continue;
    }
    helix__append(b, text + run, i - run);
    if (c >= 0x80) {
      helix__append_literal(b, "\xef\xbf\xbd");
    } else {
      char esc[6] = {'\\', 0, 0, 0, 0, 0};
      size_t n = 2;
      switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default: esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[c >> 4], esc[5] = hex[c & 15], n = 6;
      }
      helix__append(b, esc, n);
    }
    i++;
    run = i;
  }
  helix__append(b, text + run, length - run);
  helix__append_char(b, '"');
}

/* Bytes `text` takes once escaped by helix__append_quoted, without the quotes. */
static size_t helix__quoted_size(const unsigned char *text, size_t length) {
  size_t n = 0;
  for (size_t i = 0; i < length; i++) n += helix__quoted_widths[text[i]];
  return n;
}

void helix_w_key_n(helix_writer *w, const char *key, size_t length) {
  if (w->depth == 0 || !(w->state[w->depth] & 0x80)) helix_abort("helix_writer: a key outside an object");
  uint8_t phase = w->state[w->depth] & 0x7f;
  if (phase == HELIX__W_VALUE) helix_abort("helix_writer: two keys in a row");
  helix__buf b = helix__wbuf(w);
  if (phase == HELIX__W_NEXT) helix__append_char(&b, ',');
  helix__append_quoted(&b, key, length);
  helix__append_char(&b, ':');
  helix__wsync(w, b);
  w->state[w->depth] = 0x80 | HELIX__W_VALUE;
}

void helix_w_key(helix_writer *w, const char *key) { helix_w_key_n(w, key, helix_strlen(key)); }

void helix_w_string_n(helix_writer *w, const char *text, size_t length) {
  helix__before_value(w);
  helix__buf b = helix__wbuf(w);
  helix__append_quoted(&b, text, length);
  helix__wsync(w, b);
}

void helix_w_string(helix_writer *w, const char *text) { helix_w_string_n(w, text, helix_strlen(text)); }

void helix_w_int(helix_writer *w, int64_t value) {
  helix__before_value(w);
  helix__buf b = helix__wbuf(w);
  helix__append_i64(&b, value);
  helix__wsync(w, b);
}

void helix_w_number(helix_writer *w, double value) {
  if (value != value || value == __builtin_inf() || value == -__builtin_inf()) helix_abort("helix_w_number: NaN and Infinity have no JSON form");
  helix__before_value(w);
  helix__buf b = helix__wbuf(w);
  helix__append_double(&b, value);
  helix__wsync(w, b);
}

void helix_w_bool(helix_writer *w, bool value) {
  helix__before_value(w);
  helix__wappend(w, value ? "true" : "false", value ? 4 : 5);
}

void helix_w_null(helix_writer *w) {
  helix__before_value(w);
  helix__wappend(w, "null", 4);
}

void helix_w_raw(helix_writer *w, const char *json, size_t length) {
  helix__before_value(w);
  helix__wappend(w, json, length);
}

void helix_w_value(helix_writer *w, const helix_value *v) {
  switch (v->kind) {
    case HELIX_NULL: helix_w_null(w); break;
    case HELIX_BOOL: helix_w_bool(w, v->boolean); break;
    case HELIX_NUMBER:
      if (v->is_integer) helix_w_int(w, v->integer);
      else helix_w_number(w, v->number);
      break;
    case HELIX_STRING: helix_w_string_n(w, v->string, v->length); break;
    case HELIX_ARRAY:
      helix_w_begin_array(w);
      for (size_t i = 0; i < v->length; i++) helix_w_value(w, v->members[i].value);
      helix_w_end_array(w);
      break;
    case HELIX_OBJECT:
      helix_w_begin_object(w);
      for (size_t i = 0; i < v->length; i++) helix_w_key_n(w, v->members[i].key, v->members[i].key_length), helix_w_value(w, v->members[i].value);
      helix_w_end_object(w);
      break;
  }
}

char *helix_json_stringify(const helix_value *value) {
  helix_writer w;
  helix_w_init(&w);
  helix_w_value(&w, value);
  return w.data;
}

/* ---- results ---------------------------------------------------------------------------------- */

static const char *const helix__classes[] = {"I-REQ-", "A-AUTH-", "P-PRECOND-", "R-TIMEOUT-", "R-UPSTREAM-", "R-CAP-", "S-TOOL-", "C-CONTRACT-", "D-DATA-"};

bool helix_is_taxonomy_code(const char *code) {
  if (!code) return false;
  for (size_t c = 0; c < sizeof helix__classes / sizeof helix__classes[0]; c++) {
    const char *prefix = helix__classes[c];
    if (!helix__starts_with(code, prefix)) continue;
    const char *rest = code + helix_strlen(prefix);
    if (!*rest) continue;
    char previous = '-';
    for (; *rest; rest++) {
      char u = *rest;
      bool valid = (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || (u == '-' && previous != '-');
      if (!valid) return false;
      previous = u;
    }
    return previous != '-';
  }
  return false;
}

static helix_result helix__result(const char *status, helix__buf b) { return (helix_result){status, b.data, b.length}; }

helix_result helix_ok_json(const char *output_json, size_t length) {
  helix__buf b = {0, 0, 0};
  helix__append_literal(&b, "{\"status\":\"ok\",\"output\":");
  helix__append(&b, output_json, length);
  helix__append_char(&b, '}');
  return helix__result("ok", b);
}

helix_result helix_ok_writer(helix_writer *w) {
  if (w->depth != 0 || (w->state[0] & 0x7f) != HELIX__W_NEXT) helix_abort("helix_ok_writer: the writer does not hold one complete value");
  helix_result r = helix_ok_json(w->data, w->length);
  helix_w_free(w);
  return r;
}

helix_result helix_ok_value(const helix_value *value) {
  char *json = helix_json_stringify(value);
  helix_result r = helix_ok_json(json, helix_strlen(json));
  helix_free(json);
  return r;
}

/* Text cut at HELIX_MAX_MESSAGE_LENGTH bytes on a character boundary, ending with an ellipsis. */
static void helix__append_clipped(helix__buf *b, const char *text) {
  size_t n = helix_strlen(text);
  if (n <= HELIX_MAX_MESSAGE_LENGTH) {
    helix__append_quoted(b, text, n);
    return;
  }
  size_t end = HELIX_MAX_MESSAGE_LENGTH - 3;
  while (end > 0 && ((unsigned char)text[end] & 0xc0) == 0x80) end--;
  char *cut = helix_malloc(end + 4);
  __builtin_memcpy(cut, text, end);
  __builtin_memcpy(cut + end, "\xe2\x80\xa6", 3);
  helix__append_quoted(b, cut, end + 3);
  helix_free(cut);
}

helix_result helix_error_details(const char *code, const char *message, const char *hint, const char *details_json) {
  if (!helix_is_taxonomy_code(code)) helix_abortf("helix_error: '%s' is not a taxonomy code (CLASS-SUBCODE, e.g. I-REQ-INPUT)", code ? code : "");
  if (!message || !*message) helix_abort("helix_error: the message must not be empty");
  helix__buf b = {0, 0, 0};
  helix__append_literal(&b, "{\"status\":\"error\",\"error\":{\"code\":");
  helix__append_quoted(&b, code, helix_strlen(code));
  helix__append_literal(&b, ",\"message\":");
  helix__append_clipped(&b, message);
  helix__append_literal(&b, ",\"details\":");
  if (details_json) helix__append(&b, details_json, helix_strlen(details_json));
  else helix__append_literal(&b, "{}");
  helix__append_literal(&b, ",\"hint\":");
  helix__append_clipped(&b, hint ? hint : "");
  helix__append_literal(&b, "}}");
  return helix__result("error", b);
}

helix_result helix_error(const char *code, const char *message, const char *hint) { return helix_error_details(code, message, hint, 0); }

/* `prefix`, then `"<name>","args":<args_json>`: what a terminal call and a request share. */
static helix__buf helix__call_body(const char *prefix, const char *name, const char *args_json) {
  helix__buf b = {0, 0, 0};
  /* One block for the whole request (an artifact.write piece makes it half a megabyte). */
  size_t args_length = helix_strlen(args_json);
  helix__reserve(&b, helix_strlen(prefix) + 2 * helix_strlen(name) + args_length + 32);
  helix__append(&b, prefix, helix_strlen(prefix));
  helix__append_quoted(&b, name, helix_strlen(name));
  helix__append_literal(&b, ",\"args\":");
  helix__append(&b, args_json, args_length);
  return b;
}

helix_result helix_capability_call_result(const char *name, const char *args_json) {
  helix__buf b = helix__call_body("{\"status\":\"capability_call\",\"abi_version\":1,\"capability_call\":{\"name\":", name, args_json);
  helix__append_literal(&b, "}}");
  return helix__result("capability_call", b);
}

int64_t helix_run(int32_t ptr, int32_t length, helix_handler handler) {
  helix_doc doc;
  helix_result result;
  /* Parsed in place: the input buffer is ours until execute returns. */
  if (!helix_json_parse_in_place((char *)(uintptr_t)ptr, (size_t)(uint32_t)length, false, 0, &doc)) {
    char *message = helix_format("input is not valid JSON: %s at offset %zu", doc.error, doc.error_offset);
    result = helix_error(HELIX_INVALID_INPUT, message, "send the tool's parameters as one JSON object");
  } else if (doc.root->kind != HELIX_OBJECT) {
    result = helix_error(HELIX_INVALID_INPUT, "input must be a JSON object", "send the tool's parameters as one JSON object");
  } else {
    result = handler(doc.root);
  }
  if (!result.envelope) helix_abort("helix_run: the handler returned no result");
  return (int64_t)(((uint64_t)(uintptr_t)result.envelope << 32) | (uint32_t)result.length);
}

/* ---- capability calls ------------------------------------------------------------------------- */

__attribute__((import_module("helix_v1"), import_name("capability_call"))) int64_t helix__host_capability_call(int32_t ptr, int32_t length);

char *helix_capability_call_raw(const char *request, size_t request_length, size_t *length) {
  int64_t packed = helix__host_capability_call((int32_t)(uintptr_t)request, (int32_t)request_length);
  *length = (size_t)(uint32_t)packed;
  /* The host wrote the response into a buffer from our alloc: it is ours to free. */
  return (char *)(uintptr_t)((uint64_t)packed >> 32);
}

void helix_status_free(helix_status *s) {
  helix_free(s->error_code), helix_free(s->error_message), helix_free(s->error_hint), helix_free(s->error_details);
  s->error_code = s->error_message = s->error_hint = s->error_details = 0;
}

static helix_status helix__ok(void) { return (helix_status){true, 0, 0, 0, 0}; }

static helix_status helix__fail_status(const char *code, const char *message, const char *hint, char *details) {
  return (helix_status){false, helix_strdup(code), helix_strdup(message), helix_strdup(hint), details};
}

__attribute__((import_module("helix_v1"), import_name("capability_call_bulk"))) int64_t helix__host_capability_call_bulk(int32_t ptr, int32_t length, int32_t buf, int32_t buf_length);

static helix_reply helix__reply_of(char *response, size_t length);

helix_reply helix_call_capability(const char *name, const char *args_json) {
  helix__buf b = helix__call_body("{\"abi_version\":1,\"name\":", name, args_json);
  helix__append_char(&b, '}');
  size_t length;
  char *response = helix_capability_call_raw(b.data, b.length, &length);
  helix_free(b.data);
  return helix__reply_of(response, length);
}

/* One capability call through capability_call_bulk with the buffer [buf, buf+buf_length). A
 * function of its own, so that only modules using the bulk path import it (ABI-BULK-001). */
static helix_reply helix__call_capability_bulk(const char *name, const char *args_json, void *buf, int32_t buf_length) {
  helix__buf b = helix__call_body("{\"abi_version\":2,\"name\":", name, args_json);
  helix__append_char(&b, '}');
  int64_t packed = helix__host_capability_call_bulk((int32_t)(uintptr_t)b.data, (int32_t)b.length, (int32_t)(uintptr_t)buf, buf_length);
  helix_free(b.data);
  return helix__reply_of((char *)(uintptr_t)((uint64_t)packed >> 32), (size_t)(uint32_t)packed);
}

/* The host's answer envelope as a reply: the result, or the error as a status. */
static helix_reply helix__reply_of(char *response, size_t length) {
  helix_reply reply;
  __builtin_memset(&reply, 0, sizeof reply);
  if (!helix_json_parse_in_place(response, length, true, 0, &reply.doc) || reply.doc.root->kind != HELIX_OBJECT)
    helix_abortf("capability_call: the host's response is not a JSON object: %s", reply.doc.error ? reply.doc.error : "not an object");
  const helix_value *root = reply.doc.root;
  const char *status = helix_get_string(root, "status");
  if (status && helix_strcmp(status, "ok") == 0) {
    const helix_value *body = helix_get_object(root, "capability_result");
    if (!body || !helix_has(body, "result")) helix_abort("capability_call: ok response without capability_result.result");
    reply.status = helix__ok();
    reply.result = helix_get(body, "result");
    return reply;
  }
  const helix_value *error = helix_get_object(root, "error");
  if (!status || helix_strcmp(status, "error") != 0 || !error) helix_abort("capability_call: response status is neither ok nor error");
  const char *code = helix_get_string(error, "code"), *message = helix_get_string(error, "message"), *hint = helix_get_string(error, "hint");
  const helix_value *details = helix_get_object(error, "details");
  reply.status = helix__fail_status(code ? code : "", message ? message : "", hint ? hint : "", details ? helix_json_stringify(details) : 0);
  return reply;
}

void helix_reply_free(helix_reply *reply) {
  helix_status_free(&reply->status);
  helix_doc_free(&reply->doc);
  reply->result = 0;
}

helix_result helix_status_to_result(const helix_status *s, const char *context) {
  const char *code = s->error_code ? s->error_code : "";
  helix__buf details = {0, 0, 0};
  helix__append_char(&details, '{');
  bool rewrite = helix__starts_with(code, "I-REQ-") || !helix_is_taxonomy_code(code);
  if (rewrite) {
    helix__append_literal(&details, "\"capability_code\":");
    helix__append_quoted(&details, code, helix_strlen(code));
  }
  /* The host's details object, spliced in after the added key. */
  const char *host = s->error_details;
  if (host && host[0] == '{' && host[1] != '}') {
    if (rewrite) helix__append_char(&details, ',');
    helix__append(&details, host + 1, helix_strlen(host) - 2);
  }
  helix__append_char(&details, '}');
  const char *final_code = !rewrite ? code : helix_is_taxonomy_code(code) ? HELIX_CAPABILITY_REQUEST : HELIX_DATA_FORMAT;
  const char *message = s->error_message && *s->error_message ? s->error_message : "capability call failed";
  char *text = context && *context ? helix_format("%s: %s", context, message) : helix_strdup(message);
  helix_result r = helix_error_details(final_code, text, s->error_hint ? s->error_hint : "", details.data);
  helix_free(text);
  helix_free(details.data);
  return r;
}

/* Takes the status out of a reply (the caller frees the reply's document when done). */
static helix_status helix__take(helix_reply *reply) {
  helix_status s = reply->status;
  reply->status = helix__ok();
  return s;
}

/* A failed status for a result without `field` (a host of another version). */
static helix_status helix__bad_result(const char *capability, const char *field) {
  return helix__fail_status(HELIX_DATA_FORMAT, helix_format("%s: the result has no valid '%s'", capability, field),
                            "the host speaks another version of this capability; update the SDK or the host",
                            helix_format("{\"capability\":\"%s\",\"field\":\"%s\"}", capability, field));
}

/* Calls and keeps the reply: on failure the reply is freed and its status returned. */
static helix_status helix__call(const char *name, helix__buf *args, helix_reply *reply) {
  *reply = helix_call_capability(name, args->data);
  helix_free(args->data);
  args->data = 0;
  if (!reply->status.ok) {
    helix_status s = helix__take(reply);
    helix_doc_free(&reply->doc);
    return s;
  }
  return helix__ok();
}

/* Appends `"key":` to an args object under construction (a comma unless it is the first). */
/* helix__call, then the result's member `field` of `kind` into *out; a result without it fails
 * as a host of another version would (the reply is then freed). */
static helix_status helix__call_field(const char *name, helix__buf *args, helix_reply *reply, const char *field, helix_kind kind, const helix_value **out) {
  *out = 0;
  helix_status s = helix__call(name, args, reply);
  if (!s.ok) return s;
  const helix_value *v = helix_get(reply->result, field);
  if (!v || v->kind != kind) {
    helix_reply_free(reply);
    return helix__bad_result(name, field);
  }
  *out = v;
  return s;
}

static void helix__arg_key(helix__buf *b, const char *key) {
  if (b->length > 1) helix__append_char(b, ',');
  helix__append_quoted(b, key, helix_strlen(key));
  helix__append_char(b, ':');
}

static void helix__arg_string(helix__buf *b, const char *key, const char *value) {
  helix__arg_key(b, key);
  helix__append_quoted(b, value, helix_strlen(value));
}

static void helix__arg_raw(helix__buf *b, const char *key, const char *json) {
  helix__arg_key(b, key);
  helix__append(b, json, helix_strlen(json));
}

static void helix__arg_int(helix__buf *b, const char *key, int64_t value) {
  helix__arg_key(b, key);
  helix__append_i64(b, value);
}

/* Starts an args object: "{" so that the first helper adds no comma. */
static helix__buf helix__args(void) {
  helix__buf b = {0, 0, 0};
  helix__append_char(&b, '{');
  return b;
}

static void helix__args_end(helix__buf *b) { helix__append_char(b, '}'); }

helix_status helix_clock_now(helix_clock_time *out) {
  helix__buf args = helix__args();
  helix__args_end(&args);
  helix_reply reply;
  helix_status s = helix__call("clock.now_unix", &args, &reply);
  if (!s.ok) return s;
  int64_t ms, sec;
  if (!helix_as_int(helix_get(reply.result, "unix_ms"), &ms)) s = helix__bad_result("clock.now_unix", "unix_ms");
  else if (!helix_as_int(helix_get(reply.result, "unix_s"), &sec)) s = helix__bad_result("clock.now_unix", "unix_s");
  else out->unix_ms = ms, out->unix_s = sec;
  helix_reply_free(&reply);
  return s;
}

int64_t helix_clock_now_unix_ms(void) {
  helix_clock_time t;
  helix_status s = helix_clock_now(&t);
  bool ok = s.ok;
  helix_status_free(&s);
  return ok ? t.unix_ms : -1;
}

helix_status helix_log_emit(const char *level, const char *event, const char *fields_json) {
  helix__buf args = helix__args();
  helix__arg_string(&args, "level", level);
  helix__arg_string(&args, "event", event);
  if (fields_json) helix__arg_raw(&args, "fields", fields_json);
  helix__args_end(&args);
  helix_reply reply;
  helix_status s = helix__call("log.emit", &args, &reply);
  if (s.ok) helix_reply_free(&reply);
  return s;
}

helix_status helix_log_debug(const char *event, const char *fields_json) { return helix_log_emit("debug", event, fields_json); }
helix_status helix_log_info(const char *event, const char *fields_json) { return helix_log_emit("info", event, fields_json); }
helix_status helix_log_warn(const char *event, const char *fields_json) { return helix_log_emit("warn", event, fields_json); }
helix_status helix_log_error(const char *event, const char *fields_json) { return helix_log_emit("error", event, fields_json); }

helix_status helix_kv_get(const char *key, helix_reply *reply, const helix_value **value) {
  *value = 0;
  helix__buf args = helix__args();
  helix__arg_string(&args, "key", key);
  helix__args_end(&args);
  const helix_value *found;
  helix_status s = helix__call_field("kv.get", &args, reply, "found", HELIX_BOOL, &found);
  if (s.ok && found->boolean) *value = helix_get(reply->result, "value");
  return s;
}

helix_status helix_kv_put(const char *key, const char *value_json) {
  helix__buf args = helix__args();
  helix__arg_string(&args, "key", key);
  helix__arg_raw(&args, "value", value_json);
  helix__args_end(&args);
  helix_reply reply;
  helix_status s = helix__call("kv.put", &args, &reply);
  if (s.ok) helix_reply_free(&reply);
  return s;
}

helix_status helix_kv_delete(const char *key, bool *deleted) {
  helix__buf args = helix__args();
  helix__arg_string(&args, "key", key);
  helix__args_end(&args);
  helix_reply reply;
  helix_status s = helix__call("kv.delete", &args, &reply);
  if (!s.ok) return s;
  const helix_value *d = helix_get(reply.result, "deleted");
  if (!d || d->kind != HELIX_BOOL) s = helix__bad_result("kv.delete", "deleted");
  else *deleted = d->boolean;
  helix_reply_free(&reply);
  return s;
}

helix_status helix_kv_list(const char *prefix, int32_t limit, helix_reply *reply, const helix_value **keys) {
  helix__buf args = helix__args();
  helix__arg_string(&args, "prefix", prefix ? prefix : "");
  helix__arg_int(&args, "limit", limit > 0 ? limit : 100);
  helix__args_end(&args);
  return helix__call_field("kv.list", &args, reply, "keys", HELIX_ARRAY, keys);
}

static const char *helix__str_or_empty(const helix_value *object, const char *key) {
  const char *s = helix_get_string(object, key);
  return s ? s : "";
}

helix_status helix_artifact_stat(const char *artifact_id, helix_artifact_info *out) {
  __builtin_memset(out, 0, sizeof *out);
  helix__buf args = helix__args();
  helix__arg_string(&args, "artifact_id", artifact_id);
  helix__args_end(&args);
  helix_status s = helix__call("artifact.stat", &args, &out->reply);
  if (!s.ok) return s;
  const helix_value *r = out->reply.result;
  if (!helix_get_string(r, "id") || !helix_as_int(helix_get(r, "size"), &out->size)) {
    helix_reply_free(&out->reply);
    return helix__bad_result("artifact.stat", "size");
  }
  out->id = helix_get_string(r, "id");
  out->sha256 = helix__str_or_empty(r, "sha256");
  out->type = helix__str_or_empty(r, "type");
  out->compression = helix__str_or_empty(r, "compression");
  out->is_gzip = helix_strcmp(out->compression, "gzip") == 0;
  out->media_type = helix__str_or_empty(r, "media_type");
  out->label = helix__str_or_empty(r, "label");
  out->created_at = helix_get_int(r, "created_at", 0);
  out->created_by_run = helix__str_or_empty(r, "created_by_run");
  return s;
}

helix_status helix_artifact_list(int32_t limit, const char *type, helix_reply *reply, const helix_value **artifacts) {
  helix__buf args = helix__args();
  helix__arg_int(&args, "limit", limit > 0 ? limit : 100);
  if (type) helix__arg_string(&args, "type", type);
  helix__args_end(&args);
  return helix__call_field("artifact.list", &args, reply, "artifacts", HELIX_ARRAY, artifacts);
}

static const char helix__b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Appends `length` bytes as base64. */
static void helix__append_base64(helix__buf *b, const unsigned char *in, size_t length) {
  helix__reserve(b, (length + 2) / 3 * 4);
  char *out = b->data + b->length;
  size_t i = 0;
  for (; i + 3 <= length; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    *out++ = helix__b64[v >> 18], *out++ = helix__b64[(v >> 12) & 63], *out++ = helix__b64[(v >> 6) & 63], *out++ = helix__b64[v & 63];
  }
  if (i < length) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < length ? (uint32_t)in[i + 1] << 8 : 0);
    *out++ = helix__b64[v >> 18], *out++ = helix__b64[(v >> 12) & 63];
    *out++ = i + 1 < length ? helix__b64[(v >> 6) & 63] : '=';
    *out++ = '=';
  }
  b->length = (size_t)(out - b->data);
  b->data[b->length] = 0;
}

char *helix_base64_encode(const void *bytes, size_t length, size_t *out_length) {
  helix__buf b = {0, 0, 0};
  helix__reserve(&b, 0);
  b.data[0] = 0;
  helix__append_base64(&b, (const unsigned char *)bytes, length);
  if (out_length) *out_length = b.length;
  return b.data;
}

static int helix__b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool helix_base64_decode(const char *text, size_t length, void *out, size_t *out_length) {
  if (length % 4 != 0) return false;
  unsigned char *o = (unsigned char *)out;
  size_t n = 0;
  for (size_t i = 0; i < length; i += 4) {
    bool last = i + 4 == length;
    int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    int a = helix__b64_value(text[i]), b = helix__b64_value(text[i + 1]);
    int c = pad >= 2 ? 0 : helix__b64_value(text[i + 2]), d = pad >= 1 ? 0 : helix__b64_value(text[i + 3]);
    if (a < 0 || b < 0 || c < 0 || d < 0) return false;
    uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
    o[n++] = (unsigned char)(v >> 16);
    if (pad < 2) o[n++] = (unsigned char)(v >> 8);
    if (pad < 1) o[n++] = (unsigned char)v;
  }
  *out_length = n;
  return true;
}

static helix_status helix__artifact_read(const char *artifact_id, int64_t offset, int32_t length, bool decompress, bool bytes, helix_artifact_piece *out) {
  __builtin_memset(out, 0, sizeof *out);
  helix__buf args = helix__args();
  helix__arg_string(&args, "artifact_id", artifact_id);
  helix__arg_int(&args, "offset", offset);
  helix__arg_int(&args, "length", length > 0 ? length : HELIX_ARTIFACT_MAX_PIECE);
  if (decompress) helix__arg_raw(&args, "decompress", "true");
  if (bytes) helix__arg_string(&args, "encoding", "base64");
  helix__args_end(&args);
  helix_status s = helix__call("artifact.read", &args, &out->reply);
  if (!s.ok) return s;
  const helix_value *r = out->reply.result;
  const helix_value *data = helix_get(r, "data");
  const helix_value *eof = helix_get(r, "eof");
  if (!data || data->kind != HELIX_STRING || !eof || eof->kind != HELIX_BOOL || !helix_as_int(helix_get(r, "next_offset"), &out->next_offset)) {
    helix_reply_free(&out->reply);
    return helix__bad_result("artifact.read", "data");
  }
  out->data = data->string, out->length = data->length, out->eof = eof->boolean;
  out->offset = helix_get_int(r, "offset", offset);
  /* Decoded in place: the bytes are never longer than their base64 text. */
  if (bytes && !helix_base64_decode(data->string, data->length, (char *)data->string, &out->length)) {
    helix_reply_free(&out->reply);
    return helix__bad_result("artifact.read", "data");
  }
  return s;
}

helix_status helix_artifact_read(const char *artifact_id, int64_t offset, int32_t length, bool decompress, helix_artifact_piece *out) {
  return helix__artifact_read(artifact_id, offset, length, decompress, false, out);
}

helix_status helix_artifact_read_bytes(const char *artifact_id, int64_t offset, int32_t length, bool decompress, helix_artifact_piece *out) {
  return helix__artifact_read(artifact_id, offset, length, decompress, true, out);
}

static void helix__copy_field(char *dst, size_t capacity, const char *src) {
  size_t n = 0;
  if (src)
    for (; src[n] && n + 1 < capacity; n++) dst[n] = src[n];
  dst[n] = 0;
}

/* Reads an artifact.write result into `out`; a final piece must name its artifact. */
static helix_status helix__written(const helix_reply *reply, bool final, helix_artifact_written *out) {
  const helix_value *r = reply->result;
  if (!helix_as_int(helix_get(r, "bytes"), &out->bytes)) return helix__bad_result("artifact.write", "bytes");
  helix__copy_field(out->artifact_id, sizeof out->artifact_id, helix_get_string(r, "artifact_id"));
  helix__copy_field(out->sha256, sizeof out->sha256, helix_get_string(r, "sha256"));
  out->size = helix_get_int(r, "size", 0);
  if (final && !out->artifact_id[0]) return helix__bad_result("artifact.write", "artifact_id");
  return helix__ok();
}

/* Builds and sends one artifact.write piece: UTF-8 text, or with `bytes` any bytes as base64. */
static helix_status helix__write_piece(const char *role, const char *data, size_t length, size_t escaped, bool bytes, bool final,
                                       const char *type, const char *label, helix_artifact_written *out) {
  __builtin_memset(out, 0, sizeof *out);
  helix__buf args = {0, 0, 0};
  helix__reserve(&args, escaped + 256);
  helix__append_literal(&args, "{\"role\":");
  helix__append_quoted(&args, role, helix_strlen(role));
  helix__append_literal(&args, ",\"data\":");
  if (bytes) {
    helix__append_char(&args, '"');
    helix__append_base64(&args, (const unsigned char *)data, length);
    helix__append_literal(&args, "\",\"encoding\":\"base64\"");
  } else {
    helix__append_quoted(&args, data, length);
  }
  if (final) helix__append_literal(&args, ",\"final\":true");
  if (type && *type) helix__append_literal(&args, ",\"type\":"), helix__append_quoted(&args, type, helix_strlen(type));
  if (label && *label) helix__append_literal(&args, ",\"label\":"), helix__append_quoted(&args, label, helix_strlen(label));
  helix__args_end(&args);
  helix_reply reply;
  helix_status s = helix__call("artifact.write", &args, &reply);
  if (!s.ok) return s;
  s = helix__written(&reply, final, out);
  helix_reply_free(&reply);
  return s;
}

helix_status helix_artifact_write(const char *role, const char *data, size_t length, bool final, const char *type, const char *label,
                                  helix_artifact_written *out) {
  return helix__write_piece(role, data, length, helix__quoted_size((const unsigned char *)data, length), false, final, type, label, out);
}

helix_status helix_artifact_write_bytes(const char *role, const void *bytes, size_t length, bool final, const char *type, const char *label,
                                        helix_artifact_written *out) {
  return helix__write_piece(role, (const char *)bytes, length, (length + 2) / 3 * 4, true, final, type, label, out);
}

helix_status helix_artifact_read_into(const char *artifact_id, int64_t offset, void *buf, int32_t buf_len, bool decompress, helix_bulk_read *out) {
  __builtin_memset(out, 0, sizeof *out);
  helix__buf args = helix__args();
  helix__arg_string(&args, "artifact_id", artifact_id);
  helix__arg_int(&args, "offset", offset);
  if (decompress) helix__arg_raw(&args, "decompress", "true");
  helix__args_end(&args);
  helix_reply reply = helix__call_capability_bulk("artifact.read", args.data, buf, buf_len);
  helix_free(args.data);
  if (!reply.status.ok) {
    helix_status s = helix__take(&reply);
    helix_doc_free(&reply.doc);
    return s;
  }
  const helix_value *r = reply.result;
  int64_t bytes = -1;
  const helix_value *eof = helix_get(r, "eof");
  bool ok = helix_as_int(helix_get(r, "bytes"), &bytes) && bytes >= 0 && bytes <= buf_len && eof && eof->kind == HELIX_BOOL && helix_as_int(helix_get(r, "next_offset"), &out->next_offset);
  if (ok) out->bytes = (int32_t)bytes, out->eof = eof->boolean;
  helix_reply_free(&reply);
  return ok ? helix__ok() : helix__bad_result("artifact.read", "bytes");
}

helix_status helix_artifact_write_from(const char *role, const void *buf, size_t length, bool final, const char *type, const char *label,
                                       helix_artifact_written *out) {
  __builtin_memset(out, 0, sizeof *out);
  if (length > HELIX_BULK_MAX_PIECE)
    return helix__fail_status("S-TOOL-CAPABILITY-REQUEST", "helix_artifact_write_from: a piece is at most HELIX_BULK_MAX_PIECE bytes", "write in pieces of at most 4 MiB", 0);
  helix__buf args = helix__args();
  helix__arg_string(&args, "role", role);
  if (final) helix__arg_raw(&args, "final", "true");
  if (type && *type) helix__arg_string(&args, "type", type);
  if (label && *label) helix__arg_string(&args, "label", label);
  helix__args_end(&args);
  helix_reply reply = helix__call_capability_bulk("artifact.write", args.data, (void *)buf, (int32_t)length);
  helix_free(args.data);
  if (!reply.status.ok) {
    helix_status s = helix__take(&reply);
    helix_doc_free(&reply.doc);
    return s;
  }
  helix_status s = helix__written(&reply, final, out);
  helix_reply_free(&reply);
  return s;
}

/* ---- streaming reader ---------------------------------------------------------------------------- */

/* Bytes the read buffer has past its piece: scans may read whole blocks past the piece's end
 * (helix__seq_find_lf), never the bytes of another allocation. */
#define HELIX__READ_SLACK 64
/* The default read: 1 MiB, at offsets the host's store reads whole (it keeps content in 1 MiB
 * chunks; reads of 1 MiB less a few bytes cut across two chunks each and ran slower). The
 * buffer, with its slack, takes a 2 MiB block of helix_malloc. */
#define HELIX__READ_PIECE HELIX_ARTIFACT_MAX_PIECE

void helix_reader_init(helix_artifact_reader *r, const char *artifact_id, bool decompress) {
  __builtin_memset(r, 0, sizeof *r);
  r->status = helix__ok();
  helix__copy_field(r->artifact_id, sizeof r->artifact_id, artifact_id);
  r->decompress = decompress;
  r->piece_length = HELIX__READ_PIECE;
  r->max_line_length = HELIX_DEFAULT_MAX_LINE_LENGTH;
}

static void helix__reader_drop_piece(helix_artifact_reader *r) {
  if (r->have_piece) helix_reply_free(&r->piece.reply);
  r->have_piece = false;
  r->position = 0;
  r->piece.length = 0; /* no bytes left: helix_seq_next_part's fast paths take none */
}

/* Fetches the next piece into r->piece; false at the end or on failure. */
static bool helix__reader_fetch(helix_artifact_reader *r) {
  helix__reader_drop_piece(r);
  if (!r->status.ok || r->eof) return false;
  int32_t length = r->piece_length > 0 && r->piece_length <= HELIX_BULK_MAX_PIECE ? r->piece_length : HELIX__READ_PIECE;
  /* One buffer for the reader's life: the host copies each piece into it, raw (the bulk path). */
  if (r->buffer_length != length) {
    helix_free(r->buffer);
    r->buffer = (char *)helix_malloc((size_t)length + HELIX__READ_SLACK);
    r->buffer_length = length;
  }
  helix_bulk_read got;
  helix_status s = helix_artifact_read_into(r->artifact_id, r->offset, r->buffer, length, r->decompress, &got);
  if (!s.ok) {
    r->status = s;
    return false;
  }
  if (!got.eof && got.next_offset <= r->offset) {
    r->status = helix__bad_result("artifact.read", "next_offset");
    return false;
  }
  __builtin_memset(&r->piece, 0, sizeof r->piece);
  r->piece.data = r->buffer, r->piece.length = (size_t)got.bytes, r->piece.offset = r->offset;
  r->piece.next_offset = got.next_offset, r->piece.eof = got.eof;
  r->have_piece = true;
  r->eof = got.eof;
  r->offset = got.next_offset;
  return true;
}

bool helix_reader_next_piece(helix_artifact_reader *r, const char **data, size_t *length) {
  if (r->done || !helix__reader_fetch(r)) {
    r->done = true;
    return false;
  }
  *data = r->piece.data, *length = r->piece.length;
  if (r->eof) r->done = true;
  return true;
}

static bool helix__reader_line_append(helix_artifact_reader *r, const char *data, size_t length) {
  if (r->line_length + length > r->max_line_length) {
    r->status = helix__fail_status("I-REQ-TOO-LARGE", helix_format("line %lld of %s is longer than %zu bytes", (long long)(r->line_number + 1), r->artifact_id, r->max_line_length),
                                   "split the data into shorter lines, or stream it with helix_reader_next_piece", 0);
    return false;
  }
  if (r->line_length + length + 1 > r->line_capacity) {
    size_t capacity = r->line_capacity ? r->line_capacity : 256;
    while (capacity < r->line_length + length + 1) capacity *= 2;
    r->line = (char *)helix_realloc(r->line, capacity);
    r->line_capacity = capacity;
  }
  __builtin_memcpy(r->line + r->line_length, data, length);
  r->line_length += length;
  r->line[r->line_length] = 0;
  return true;
}

bool helix_reader_next_line(helix_artifact_reader *r, const char **line, size_t *length) {
  if (r->done) return false;
  r->line_length = 0;
  bool spanning = false; /* part of the line is in r->line */
  for (;;) {
    if (!r->have_piece || r->position >= r->piece.length) {
      if (r->eof || !helix__reader_fetch(r)) {
        helix__reader_drop_piece(r);
        r->done = true;
        if (!r->status.ok || !spanning) return false;
        /* A last line without a newline is still a line. */
        if (r->line_length > 0 && r->line[r->line_length - 1] == '\r') r->line[--r->line_length] = 0;
        r->line_number++;
        *line = r->line, *length = r->line_length;
        return true;
      }
      continue;
    }
    const char *start = r->piece.data + r->position;
    size_t available = r->piece.length - r->position;
    size_t n = helix__scan_byte(start, 0, available, '\n');
    bool newline = n < available;
    if (newline && !spanning) {
      /* The whole line is inside this piece: no copy. */
      if (n > r->max_line_length) {
        helix__reader_line_append(r, start, n); /* records I-REQ-TOO-LARGE */
        r->done = true;
        return false;
      }
      r->position += n + 1;
      if (n > 0 && start[n - 1] == '\r') n--;
      r->line_number++;
      *line = start, *length = n;
      return true;
    }
    if (!helix__reader_line_append(r, start, n)) {
      r->done = true;
      return false;
    }
    spanning = true;
    r->position += newline ? n + 1 : n;
    if (newline) {
      if (r->line_length > 0 && r->line[r->line_length - 1] == '\r') r->line[--r->line_length] = 0;
      r->line_number++;
      *line = r->line, *length = r->line_length;
      return true;
    }
  }
}

void helix_reader_close(helix_artifact_reader *r) {
  helix__reader_drop_piece(r);
  helix_free(r->line);
  helix_free(r->buffer);
  r->buffer = 0, r->buffer_length = 0;
  r->line = 0;
  r->line_capacity = r->line_length = 0;
  r->done = true;
}

/* ---- FASTA/FASTQ records ------------------------------------------------------------------ */

/* The scans of the reader use 128-bit SIMD (one fuel unit per instruction like any other, 16
 * bytes at a time), whatever flags the tool is compiled with: these functions alone are
 * compiled for simd128, which every Helix engine runs. */
#include <wasm_simd128.h>
#define HELIX__SIMD __attribute__((target("simd128")))

/* Parser states, as in the AssemblyScript SDK's SeqReader. */
#define HELIX__SEQ_START 0    /* before the first record: blank lines, then '>' or '@' */
#define HELIX__SEQ_BETWEEN 1  /* FASTQ between records; FASTA: a held '>' line */
#define HELIX__SEQ_HEADER 2   /* inside a header line */
#define HELIX__SEQ_SEQUENCE 3 /* FASTA sequence lines; the FASTQ sequence line */
#define HELIX__SEQ_PLUS 4     /* FASTQ '+' line */
#define HELIX__SEQ_QUALITY 5  /* FASTQ quality line */
#define HELIX__SEQ_BLANK 6    /* the rest of a blank line between records */
#define HELIX__SEQ_DONE 7
/* A FASTQ record taken whole from the read buffer (helix__seq_take_fastq): its sequence, then
 * its quality, are the next parts. */
#define HELIX__SEQ_QUEUED_SEQUENCE 8
#define HELIX__SEQ_QUEUED_QUALITY 9

void helix_seq_init_format(helix_seq_reader *r, const char *artifact_id, bool decompress, helix_seq_format only) {
  __builtin_memset(r, 0, sizeof *r);
  r->status = helix__ok();
  helix_reader_init(&r->source, artifact_id, decompress);
  r->only = only;
  r->keep_sequence = true;
  r->max_record_bytes = HELIX_SEQ_DEFAULT_MAX_RECORD_BYTES;
  r->line_start = true;
}

void helix_seq_init(helix_seq_reader *r, const char *artifact_id, bool decompress) { helix_seq_init_format(r, artifact_id, decompress, HELIX_SEQ_NONE); }

const char *helix_seq_format_name(const helix_seq_reader *r) {
  return r->format == HELIX_SEQ_FASTA ? "FASTA" : r->format == HELIX_SEQ_FASTQ ? "FASTQ" : "";
}

/* Appends to a kept buffer, NUL-terminated, with room for a 16-byte read past the end
 * (helix__seq_split_header). */
static bool helix__seq_append(helix__seq_buf *b, const char *data, size_t length) {
  if (b->length + length + 1 > b->capacity) {
    size_t capacity = b->capacity < 256 ? 256 : b->capacity;
    while (capacity < b->length + length + 1) capacity *= 2;
    char *grown = (char *)helix_realloc(b->data, capacity + 16);
    b->data = grown, b->capacity = capacity;
  }
  __builtin_memcpy(b->data + b->length, data, length);
  b->length += length;
  b->data[b->length] = 0;
  return true;
}

static void helix__seq_buf_free(helix__seq_buf *b) {
  helix_free(b->data);
  b->data = 0, b->length = b->capacity = 0;
}

/* The first LF in [at, end), or `end`. It reads whole 64-byte blocks, up to 63 bytes past
 * `end`: the read buffer has HELIX__READ_SLACK bytes after its piece for this. */
static inline __attribute__((always_inline)) HELIX__SIMD const char *helix__seq_find_lf(const char *at, const char *end) {
  const v128_t lf = wasm_i8x16_splat('\n');
  for (; at < end; at += 64) {
    v128_t a = wasm_i8x16_eq(wasm_v128_load(at), lf), b = wasm_i8x16_eq(wasm_v128_load(at + 16), lf);
    v128_t c = wasm_i8x16_eq(wasm_v128_load(at + 32), lf), d = wasm_i8x16_eq(wasm_v128_load(at + 48), lf);
    if (wasm_v128_any_true(wasm_v128_or(wasm_v128_or(a, b), wasm_v128_or(c, d)))) {
      uint64_t low = wasm_i8x16_bitmask(a) | wasm_i8x16_bitmask(b) << 16;
      uint64_t high = wasm_i8x16_bitmask(c) | wasm_i8x16_bitmask(d) << 16;
      const char *found = at + __builtin_ctzll(low | high << 32);
      return found < end ? found : end;
    }
  }
  return end;
}

/* Index of the first byte of p[0..n) outside '!'..'~', or n. Sixteen bytes a step: b - 0x21
 * (mod 256) is above 0x5d exactly for the bytes outside the range; the last step overlaps the
 * one before so no byte past p[n) is read. */
static inline __attribute__((always_inline)) HELIX__SIMD size_t helix__seq_bad_quality(const char *p, size_t n) {
  size_t i = 0;
  if (n >= 16) {
    const v128_t low = wasm_i8x16_splat(0x21), span = wasm_i8x16_splat(0x5d);
#define HELIX__BAD16(at) wasm_u8x16_gt(wasm_i8x16_sub(wasm_v128_load(at), low), span)
    for (; i + 64 <= n; i += 64)
      if (wasm_v128_any_true(wasm_v128_or(wasm_v128_or(HELIX__BAD16(p + i), HELIX__BAD16(p + i + 16)),
                                          wasm_v128_or(HELIX__BAD16(p + i + 32), HELIX__BAD16(p + i + 48)))))
        break;
    for (; i + 16 <= n; i += 16)
      if (wasm_v128_any_true(HELIX__BAD16(p + i))) break;
    if (i + 16 > n && !wasm_v128_any_true(HELIX__BAD16(p + n - 16))) return n;
#undef HELIX__BAD16
  }
  for (; i < n; i++)
    if ((unsigned char)(p[i] - 0x21) > 0x5d) return i;
  return n;
}

/* The next piece of a line from the source: its bytes up to the LF or the end of the read
 * buffer, without the line end (a CR at the end of the buffer is held until the next byte shows
 * whether an LF follows). Sets r->line_*; false at the end of the data or on a failed read. */
static HELIX__SIMD bool helix__seq_fetch(helix_seq_reader *r) {
  /* The line the previous piece ended counts as read; the column moves on inside a line. */
  if (r->line_ptr && r->line_ends) r->lines_done++;
  r->column = r->line_ends || !r->line_ptr ? 0 : r->column + (int64_t)r->line_len;
  r->line_ptr = 0;
  helix_artifact_reader *s = &r->source;
  r->line_starts = r->line_start;
  for (;;) {
    if (!s->have_piece || s->position >= s->piece.length) {
      if (s->eof || !helix__reader_fetch(s)) {
        helix__reader_drop_piece(s);
        if (!s->status.ok) return false;
        /* The data ends inside a line (a CR held back is the line's end). */
        r->cr_pending = false;
        if (!r->line_open) return false;
        r->line_open = false;
        r->line_ptr = "", r->line_len = 0, r->line_ends = true;
        r->line_start = true;
        return true;
      }
      continue;
    }
    const char *start = s->piece.data + s->position;
    const char *end = s->piece.data + s->piece.length;
    if (r->cr_pending) {
      r->cr_pending = false;
      if (start[0] != '\n') {
        /* The CR was a byte of the line, not the start of its line end. */
        r->line_ptr = "\r", r->line_len = 1, r->line_ends = false;
        r->line_start = false, r->line_open = true;
        return true;
      }
    }
    const char *feed = helix__seq_find_lf(start, end);
    bool newline = feed < end;
    s->position = (size_t)(feed - s->piece.data) + (newline ? 1 : 0);
    size_t length = (size_t)(feed - start);
    if (length > 0 && start[length - 1] == '\r') {
      length--;
      if (!newline) r->cr_pending = true;
    }
    r->line_open = !newline;
    if (length == 0 && !newline) continue; /* only a CR so far */
    r->line_ptr = start, r->line_len = length, r->line_ends = newline;
    r->line_start = newline;
    return true;
  }
}

/* After a FASTQ header line that ended inside the read buffer: takes the rest of the record
 * (sequence, '+' and quality lines) in one step when all three lines are there and valid (a
 * non-empty sequence, a '+' line, a quality of '!'..'~' as long as the sequence); the source
 * moves past them and the parts are queued. False, with nothing moved, in every other case: the
 * line-by-line path then reads the record and reports what is wrong with it. Only the sequence
 * line is searched for its LF: a bare '+' line is one byte, and the quality's line end must
 * follow exactly as many quality bytes. */
static inline __attribute__((always_inline)) HELIX__SIMD bool helix__seq_take_fastq(helix_seq_reader *r) {
  helix_artifact_reader *s = &r->source;
  if (!s->have_piece || r->cr_pending) return false;
  const char *buffer = s->piece.data, *end = buffer + s->piece.length;
  const char *sequence = buffer + s->position;
  const char *sequence_feed = helix__seq_find_lf(sequence, end);
  if (end - sequence_feed < 3 || sequence_feed[1] != '+') return false;
  const char *plus_feed = sequence_feed + 2;
  if (*plus_feed != '\n') {
    plus_feed = helix__seq_find_lf(plus_feed, end);
    if (plus_feed >= end) return false;
  }
  const char *sequence_end = sequence_feed > sequence && sequence_feed[-1] == '\r' ? sequence_feed - 1 : sequence_feed;
  size_t length = (size_t)(sequence_end - sequence);
  const char *quality = plus_feed + 1;
  if (length == 0 || end - quality < (ptrdiff_t)length + 2) return false;
  const char *quality_feed = quality + length;
  if (*quality_feed == '\r') quality_feed++;
  if (*quality_feed != '\n' || helix__seq_bad_quality(quality, length) < length) return false;
  s->position = (size_t)(quality_feed + 1 - buffer);
  /* The header, sequence and '+' lines are read; the quality line is the current line, counted
   * at the next fetch as any line is. */
  r->lines_done += 3;
  r->queued_sequence = sequence, r->queued_quality = quality, r->queued_length = length;
  r->line_ptr = quality, r->line_len = length, r->line_ends = true, r->line_starts = true;
  return true;
}

static size_t helix__seq_first_non_blank(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return i;
  return n;
}

/* A byte for a message: printable ASCII as itself, anything else as U+00XX. */
static char *helix__seq_printable(unsigned char byte) {
  return byte >= 0x20 && byte < 0x7f ? helix_format("%c", byte) : helix_format("U+00%c%c", "0123456789ABCDEF"[byte >> 4], "0123456789ABCDEF"[byte & 15]);
}

/* The format named in messages: the one detected, else the one the reader is restricted to. */
static helix_seq_format helix__seq_named(const helix_seq_reader *r) { return r->format != HELIX_SEQ_NONE ? r->format : r->only; }

/* Stops the reader with its own error; `message` is consumed. */
static helix_seq_part helix__seq_fail(helix_seq_reader *r, const char *code, char *message, const char *hint, int64_t line, const char *extra) {
  helix__buf details = {0, 0, 0};
  helix__append_literal(&details, "{\"artifact_id\":");
  helix__append_quoted(&details, r->source.artifact_id, helix_strlen(r->source.artifact_id));
  helix__append_literal(&details, ",\"line\":");
  helix__append_i64(&details, line);
  helix__append_literal(&details, ",\"record\":");
  helix__append_i64(&details, r->records);
  helix__append_literal(&details, ",\"format\":");
  helix__append_quoted(&details, helix_seq_format_name(r), helix_strlen(helix_seq_format_name(r)));
  if (extra) helix__append(&details, extra, helix_strlen(extra));
  helix__append_char(&details, '}');
  helix_status_free(&r->status);
  r->status = helix__fail_status(code, message, hint, details.data);
  helix_free(message);
  r->own_error = true;
  r->state = HELIX__SEQ_DONE;
  r->end_pending = false;
  helix_reader_close(&r->source);
  return HELIX_SEQ_END;
}

/* `reason` is consumed; `extra`: more details members (",\"key\":value"), or NULL. */
static helix_seq_part helix__seq_format_error(helix_seq_reader *r, char *reason, const char *extra) {
  int64_t line = r->lines_done + 1;
  helix_seq_format named = helix__seq_named(r);
  const char *name = named == HELIX_SEQ_FASTQ ? "FASTQ" : named == HELIX_SEQ_FASTA ? "FASTA" : "FASTA or FASTQ";
  const char *hint = r->only == HELIX_SEQ_FASTQ ? HELIX_SEQ_FASTQ_HINT : r->only == HELIX_SEQ_FASTA ? HELIX_SEQ_FASTA_HINT : HELIX_SEQ_FORMAT_HINT;
  char *message = helix_format("not %s: line %lld: %s", name, (long long)line, reason);
  helix_free(reason);
  return helix__seq_fail(r, HELIX_DATA_FORMAT, message, hint, line, extra);
}

/* "found 'c' at column N" for byte `at` of the current line piece (N counts from the line start). */
static char *helix__seq_found(helix_seq_reader *r, size_t at) {
  char *c = helix__seq_printable((unsigned char)r->line_ptr[at]);
  char *text = helix_format("found '%s' at column %lld", c, (long long)(r->column + (int64_t)at + 1));
  helix_free(c);
  return text;
}

static helix_seq_part helix__seq_deliver(helix_seq_reader *r, helix_seq_part part, const char *p, size_t n, bool ends) {
  r->part_ptr = p, r->part_len = n, r->part_ends_line = ends;
  return part;
}

/* The source ran out (or failed): close the last record, or report a truncated one. */
static helix_seq_part helix__seq_at_end(helix_seq_reader *r) {
  helix_artifact_reader *s = &r->source;
  if (!s->status.ok) {
    helix_status_free(&r->status);
    r->status = s->status;
    s->status = helix__ok();
    r->state = HELIX__SEQ_DONE;
    helix_reader_close(s);
    return HELIX_SEQ_END;
  }
  int state = r->state;
  r->state = HELIX__SEQ_DONE;
  if (r->format == HELIX_SEQ_FASTA && (state == HELIX__SEQ_HEADER || state == HELIX__SEQ_SEQUENCE)) return HELIX_SEQ_RECORD_END;
  if (r->format == HELIX_SEQ_FASTQ && state != HELIX__SEQ_BETWEEN && state != HELIX__SEQ_BLANK) {
    const char *missing = state == HELIX__SEQ_HEADER || state == HELIX__SEQ_SEQUENCE ? "its sequence, '+' and quality lines"
                          : state == HELIX__SEQ_PLUS                                ? "its '+' and quality lines"
                                                                                    : "its quality line";
    r->lines_done--; /* the message names the last line */
    return helix__seq_format_error(
        r, helix_format("the data ends inside record %lld (header on line %lld), before %s", (long long)r->records, (long long)r->record_line, missing), 0);
  }
  helix_reader_close(s);
  return HELIX_SEQ_END;
}

/* A line that starts with '>' or '@' where a record may start. */
static HELIX__SIMD helix_seq_part helix__seq_header(helix_seq_reader *r, int first) {
  helix_seq_format format = first == '>' ? HELIX_SEQ_FASTA : HELIX_SEQ_FASTQ;
  if (r->format == HELIX_SEQ_NONE && r->only != HELIX_SEQ_NONE && r->only != format) {
    return helix__seq_format_error(r,
                                   helix_format("expected a '%c' header line, found '%c' (%s; this tool reads %s only)", r->only == HELIX_SEQ_FASTQ ? '@' : '>', first,
                                                format == HELIX_SEQ_FASTQ ? "FASTQ" : "FASTA", r->only == HELIX_SEQ_FASTQ ? "FASTQ" : "FASTA"),
                                   0);
  }
  if (r->format == HELIX_SEQ_NONE) r->format = format;
  else if (r->format != format) return helix__seq_format_error(r, helix_format("expected a '@' header line, found '%c'", first), 0);
  r->records++;
  r->sequence_length = r->quality_length = 0;
  r->record_line = r->lines_done + 1;
  const char *p = r->line_ptr;
  size_t n = r->line_len;
  bool ends = r->line_ends;
  r->state = !ends ? HELIX__SEQ_HEADER : format == HELIX_SEQ_FASTQ && helix__seq_take_fastq(r) ? HELIX__SEQ_QUEUED_SEQUENCE : HELIX__SEQ_SEQUENCE;
  return helix__seq_deliver(r, HELIX_SEQ_HEADER, p + 1, n - 1, ends);
}

/* A piece of the quality line: the part to deliver, or -1 when there is none (an empty piece). */
static HELIX__SIMD int helix__seq_quality(helix_seq_reader *r) {
  const char *p = r->line_ptr;
  size_t n = r->line_len;
  size_t bad = helix__seq_bad_quality(p, n);
  if (bad < n) {
    char *c = helix__seq_printable((unsigned char)p[bad]);
    char *reason = helix_format("'%s' at column %lld is not a quality character (phred+33 uses '!'..'~')", c, (long long)(r->column + (int64_t)bad + 1));
    helix_free(c);
    return helix__seq_format_error(r, reason, 0);
  }
  r->quality_length += (int64_t)n;
  if (r->quality_length > r->sequence_length || (r->line_ends && r->quality_length != r->sequence_length)) {
    bool longer = r->quality_length > r->sequence_length;
    char *extra = helix_format(",\"sequence_length\":%lld,\"quality_length\":%lld", (long long)r->sequence_length, (long long)r->quality_length);
    helix__seq_format_error(r,
                            helix_format("the quality of record %lld (header on line %lld) is %s its sequence (%s%lld vs %lld)", (long long)r->records,
                                         (long long)r->record_line, longer ? "longer than" : "shorter than", longer ? "more than " : "",
                                         (long long)r->quality_length, (long long)r->sequence_length),
                            extra);
    helix_free(extra);
    return HELIX_SEQ_END;
  }
  if (r->line_ends) {
    r->state = HELIX__SEQ_BETWEEN;
    if (n == 0) return HELIX_SEQ_RECORD_END;
    r->end_pending = true;
  }
  return n == 0 ? -1 : (int)helix__seq_deliver(r, HELIX_SEQ_QUALITY, p, n, r->line_ends);
}

/* The line-by-line path of helix_seq_next_part: every case its fast paths leave. Out of line on
 * purpose: the host charges a straight run of code in full when it starts, so the rare cases
 * stay out of the common ones' runs. */
static __attribute__((noinline)) HELIX__SIMD helix_seq_part helix__seq_next_slow(helix_seq_reader *r) {
  if (r->end_pending) {
    r->end_pending = false;
    return HELIX_SEQ_RECORD_END;
  }
  if (!r->status.ok || r->state == HELIX__SEQ_DONE) return HELIX_SEQ_END;
  for (;;) {
    if (r->held) r->held = false;
    else if (!helix__seq_fetch(r)) return helix__seq_at_end(r);
    const char *p = r->line_ptr;
    size_t n = r->line_len;
    int first = n > 0 ? (unsigned char)p[0] : -1;
    switch (r->state) {
    case HELIX__SEQ_SEQUENCE:
      if (r->format == HELIX_SEQ_FASTA) {
        if (r->line_starts && first == '>') {
          r->held = true;
          r->state = HELIX__SEQ_BETWEEN;
          return HELIX_SEQ_RECORD_END;
        }
      } else if (r->line_ends) r->state = HELIX__SEQ_PLUS;
      if (n == 0) continue;
      r->sequence_length += (int64_t)n;
      return helix__seq_deliver(r, HELIX_SEQ_SEQUENCE, p, n, r->line_ends);
    case HELIX__SEQ_START:
    case HELIX__SEQ_BETWEEN: {
      if (r->line_starts && (first == '>' || first == '@')) return helix__seq_header(r, first);
      size_t at = helix__seq_first_non_blank(p, n);
      if (at < n) {
        helix_seq_format named = helix__seq_named(r);
        const char *expected = named == HELIX_SEQ_FASTQ ? "a '@' header line"
                               : named == HELIX_SEQ_FASTA ? "a '>' header line"
                                                          : "a header line starting with '>' (FASTA) or '@' (FASTQ)";
        char *found = helix__seq_found(r, at);
        char *reason = helix_format("expected %s, %s", expected, found);
        helix_free(found);
        return helix__seq_format_error(r, reason, 0);
      }
      if (!r->line_ends) r->blank_return = r->state, r->state = HELIX__SEQ_BLANK;
      continue;
    }
    case HELIX__SEQ_BLANK: {
      size_t at = helix__seq_first_non_blank(p, n);
      if (at < n) {
        char *found = helix__seq_found(r, at);
        char *reason = helix_format("expected a blank line, %s", found);
        helix_free(found);
        return helix__seq_format_error(r, reason, 0);
      }
      if (r->line_ends) r->state = r->blank_return;
      continue;
    }
    case HELIX__SEQ_HEADER:
      if (r->line_ends) r->state = HELIX__SEQ_SEQUENCE;
      return helix__seq_deliver(r, HELIX_SEQ_HEADER, p, n, r->line_ends);
    case HELIX__SEQ_PLUS:
      if (r->line_starts && first != '+') {
        char *c = first < 0 ? 0 : helix__seq_printable((unsigned char)first);
        char *reason = first < 0 ? helix_format("expected the '+' line of record %lld, found an empty line (multi-line FASTQ is not supported)", (long long)r->records)
                                 : helix_format("expected the '+' line of record %lld, found '%s' (multi-line FASTQ is not supported)", (long long)r->records, c);
        helix_free(c);
        return helix__seq_format_error(r, reason, 0);
      }
      if (r->line_ends) r->state = HELIX__SEQ_QUALITY;
      continue;
    case HELIX__SEQ_QUALITY: {
      int part = helix__seq_quality(r);
      if (part >= 0) return (helix_seq_part)part;
      continue;
    }
    default:
      return HELIX_SEQ_END;
    }
  }
}

/* The common cases, each a few straight runs of code: a FASTA sequence line, a FASTQ record
 * whole in the read buffer (its header now, its sequence and quality queued), each line ending
 * inside the read buffer. They leave the reader as the line-by-line path would have. */
HELIX__SIMD helix_seq_part helix_seq_next_part(helix_seq_reader *r) {
  int state = r->state;
  if (state == HELIX__SEQ_QUEUED_SEQUENCE) {
    r->sequence_length = (int64_t)r->queued_length;
    r->state = HELIX__SEQ_QUEUED_QUALITY;
    return helix__seq_deliver(r, HELIX_SEQ_SEQUENCE, r->queued_sequence, r->queued_length, true);
  }
  if (state == HELIX__SEQ_QUEUED_QUALITY) {
    r->quality_length = (int64_t)r->queued_length;
    r->state = HELIX__SEQ_BETWEEN;
    r->end_pending = true;
    return helix__seq_deliver(r, HELIX_SEQ_QUALITY, r->queued_quality, r->queued_length, true);
  }
  /* A line start with nothing held or pending (cr_pending implies a line is open; held and
   * end_pending come with BETWEEN, checked below), in a known format. */
  helix_seq_format format = r->format;
  if (r->line_start && !r->end_pending && !r->held && format != HELIX_SEQ_NONE) {
    bool fasta = format == HELIX_SEQ_FASTA;
    if (fasta ? state == HELIX__SEQ_SEQUENCE : state == HELIX__SEQ_BETWEEN) {
      helix_artifact_reader *s = &r->source;
      const char *buffer = s->piece.data, *p = buffer + s->position, *end = buffer + s->piece.length;
      const char *feed = helix__seq_find_lf(p, end);
      size_t length = (size_t)(feed - p);
      length -= length > 0 && feed[-1] == '\r';
      /* FASTA: a non-empty line that does not start a record; FASTQ: a header line. */
      if (feed < end && (fasta ? length > 0 && *p != '>' : *p == '@')) {
        s->position = (size_t)(feed + 1 - buffer);
        r->lines_done++; /* the line before, which ended (line_start) */
        r->column = 0;
        r->line_ptr = p, r->line_len = length, r->line_ends = true, r->line_starts = true;
        if (fasta) {
          r->sequence_length += (int64_t)length;
          return helix__seq_deliver(r, HELIX_SEQ_SEQUENCE, p, length, true);
        }
        r->records++;
        r->sequence_length = r->quality_length = 0;
        r->record_line = r->lines_done + 1;
        r->state = helix__seq_take_fastq(r) ? HELIX__SEQ_QUEUED_SEQUENCE : HELIX__SEQ_SEQUENCE;
        return helix__seq_deliver(r, HELIX_SEQ_HEADER, p + 1, length - 1, true);
      }
    }
  }
  return helix__seq_next_slow(r);
}

/* Appends the current part to a kept buffer, or fails with I-REQ-TOO-LARGE past `limit`. */
static bool helix__seq_keep(helix_seq_reader *r, helix__seq_buf *b, size_t limit, const char *what) {
  if (b->length + r->part_len > limit) {
    char *message = helix_format("the %s of record %lld (line %lld) is longer than %zu bytes, the most this tool holds in memory", what,
                                 (long long)r->records, (long long)r->record_line, limit);
    char *extra = helix_format(",\"max_bytes\":%zu", limit);
    helix__seq_fail(r, "I-REQ-TOO-LARGE", message, "split the record into shorter ones before calling this tool", r->record_line, extra);
    helix_free(extra);
    return false;
  }
  return helix__seq_append(b, r->part_ptr, r->part_len);
}

/* Sets the record's id and description from its header: the id ends at the first space or tab,
 * found sixteen bytes a step. The header is in the read buffer or in header_buf, both with
 * room for a 16-byte read past its end. */
static HELIX__SIMD bool helix__seq_split_header(helix_seq_reader *r) {
  const char *h = r->header;
  size_t n = r->header_length, cut = 0;
  const v128_t space = wasm_i8x16_splat(' '), tab = wasm_i8x16_splat('\t');
  for (;; cut += 16) {
    v128_t v = wasm_v128_load(h + cut);
    uint32_t mask = wasm_i8x16_bitmask(wasm_v128_or(wasm_i8x16_eq(v, space), wasm_i8x16_eq(v, tab)));
    if (mask || cut + 16 >= n) {
      cut += mask ? __builtin_ctz(mask) : 16;
      break;
    }
  }
  if (cut > n) cut = n;
  r->id = h, r->id_length = cut;
  while (cut < n && (h[cut] == ' ' || h[cut] == '\t')) cut++;
  r->description = h + cut;
  return true;
}

bool helix_seq_next(helix_seq_reader *r) {
  static const char empty[16] = {0}; /* room for helix__seq_split_header's read */
  r->header_buf.length = r->sequence_buf.length = r->quality_buf.length = 0;
  for (;;) {
    helix_seq_part part = helix_seq_next_part(r);
    switch (part) {
    case HELIX_SEQ_END:
      return false;
    case HELIX_SEQ_HEADER:
      if (r->state == HELIX__SEQ_QUEUED_SEQUENCE) {
        /* A FASTQ record whole in the read buffer: point into it, no copy. The byte after each
         * line (its CR or LF, already read past) becomes its NUL. */
        char *header = (char *)r->part_ptr, *sequence = (char *)r->queued_sequence, *quality = (char *)r->queued_quality;
        size_t length = r->queued_length;
        header[r->part_len] = 0, sequence[length] = 0, quality[length] = 0;
        r->header = header, r->header_length = r->part_len;
        r->sequence = r->keep_sequence ? sequence : 0;
        r->quality = r->keep_sequence ? quality : 0;
        r->sequence_length = r->quality_length = (int64_t)length;
        r->state = HELIX__SEQ_BETWEEN;
        return helix__seq_split_header(r);
      }
      if (!helix__seq_keep(r, &r->header_buf, HELIX_SEQ_MAX_HEADER_BYTES, "header")) return false;
      continue;
    case HELIX_SEQ_SEQUENCE:
      if (r->keep_sequence && !helix__seq_keep(r, &r->sequence_buf, r->max_record_bytes, "sequence")) return false;
      continue;
    case HELIX_SEQ_QUALITY:
      if (r->keep_sequence && !helix__seq_keep(r, &r->quality_buf, r->max_record_bytes, "quality")) return false;
      continue;
    case HELIX_SEQ_RECORD_END: {
      r->header = r->header_buf.length ? r->header_buf.data : empty;
      r->header_length = r->header_buf.length;
      bool fastq = r->format == HELIX_SEQ_FASTQ;
      r->sequence = !r->keep_sequence ? 0 : r->sequence_buf.length ? r->sequence_buf.data : empty;
      r->quality = !r->keep_sequence || !fastq ? 0 : r->quality_buf.length ? r->quality_buf.data : empty;
      return helix__seq_split_header(r);
    }
    }
  }
}

helix_result helix_seq_to_result(const helix_seq_reader *r, const char *context) {
  if (!r->own_error) return helix_status_to_result(&r->status, context);
  char *message = context && *context ? helix_format("%s: %s", context, r->status.error_message) : helix_strdup(r->status.error_message);
  helix_result result = helix_error_details(r->status.error_code, message, r->status.error_hint, r->status.error_details);
  helix_free(message);
  return result;
}

void helix_seq_close(helix_seq_reader *r) {
  helix_reader_close(&r->source);
  helix__seq_buf_free(&r->header_buf);
  helix__seq_buf_free(&r->sequence_buf);
  helix__seq_buf_free(&r->quality_buf);
  r->state = HELIX__SEQ_DONE;
  r->end_pending = false;
}

/* ---- streaming writer ------------------------------------------------------------------------------ */

/* Escaped pieces stay well under the broker's 1.5 MB request bound. */
#define HELIX__WRITE_ESCAPED_LIMIT (1024 * 1024)

void helix_awriter_init(helix_artifact_writer *w, const char *role, const char *type, const char *label) {
  __builtin_memset(w, 0, sizeof *w);
  w->status = helix__ok();
  helix__copy_field(w->role, sizeof w->role, role);
  helix__copy_field(w->type, sizeof w->type, type);
  helix__copy_field(w->label, sizeof w->label, label);
}

void helix_awriter_init_bulk(helix_artifact_writer *w, const char *role, const char *type, const char *label) {
  helix_awriter_init(w, role, type, label);
  w->bulk_send = helix_artifact_write_from;
}

/* Sends `length` buffered bytes (not splitting a character) as one piece. */
static bool helix__awriter_send(helix_artifact_writer *w, bool final) {
  size_t cut = w->length;
  if (!final && !w->bytes) {
    /* Keep an incomplete trailing character for the next piece. */
    size_t i = cut;
    while (i > 0 && i + 4 > cut && ((unsigned char)w->buffer[i - 1] & 0xc0) == 0x80) i--;
    if (i > 0) {
      unsigned char lead = (unsigned char)w->buffer[i - 1];
      size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (cut - (i - 1) < need) cut = i - 1;
    }
  }
  if (cut == 0 && !final) return true;
  helix_status s;
  if (w->bulk_send) {
    s = w->bulk_send(w->role, w->buffer, cut, final, w->type, w->label, &w->written);
  } else {
    size_t escaped = w->bytes ? (cut + 2) / 3 * 4 : helix__quoted_size((const unsigned char *)w->buffer, cut);
    s = helix__write_piece(w->role, w->buffer ? w->buffer : "", cut, escaped, w->bytes, final, w->type, w->label, &w->written);
  }
  if (!s.ok) {
    w->status = s;
    return false;
  }
  w->pieces_sent++;
  __builtin_memmove(w->buffer, w->buffer + cut, w->length - cut);
  w->length -= cut;
  w->escaped = w->bytes || w->bulk_send ? 0 : helix__quoted_size((const unsigned char *)w->buffer, w->length);
  return true;
}

bool helix_awriter_write(helix_artifact_writer *w, const char *data, size_t length) {
  if (!w->status.ok) return false;
  if (w->finished) {
    w->status = helix__fail_status("S-TOOL-CAPABILITY-REQUEST", "helix_awriter_write after finish", "write everything before finishing the artifact", 0);
    return false;
  }
  if (!w->buffer) w->buffer = (char *)helix_malloc(HELIX_WRITE_PIECE_BYTES + 8);
  while (length > 0) {
    size_t room = HELIX_WRITE_PIECE_BYTES - w->length;
    size_t n = length < room ? length : room;
    /* Bytes go as base64 (4/3 of their size, well under the bound), and anything on the bulk
     * path raw; text on the JSON path is measured escaped. */
    size_t escaped = w->bytes || w->bulk_send ? 0 : helix__quoted_size((const unsigned char *)data, n);
    /* Text that escapes badly (control characters) is sent in smaller pieces. */
    while (n > 1 && w->escaped + escaped > HELIX__WRITE_ESCAPED_LIMIT) n /= 2, escaped = helix__quoted_size((const unsigned char *)data, n);
    __builtin_memcpy(w->buffer + w->length, data, n);
    w->length += n, w->escaped += escaped, w->size += (int64_t)n;
    data += n, length -= n;
    if ((w->length >= HELIX_WRITE_PIECE_BYTES || w->escaped * 2 > HELIX__WRITE_ESCAPED_LIMIT) && !helix__awriter_send(w, false)) return false;
  }
  return true;
}

bool helix_awriter_write_string(helix_artifact_writer *w, const char *text) { return helix_awriter_write(w, text, helix_strlen(text)); }

bool helix_awriter_write_line(helix_artifact_writer *w, const char *data, size_t length) {
  return helix_awriter_write(w, data, length) && helix_awriter_write(w, "\n", 1);
}

bool helix_awriter_flush(helix_artifact_writer *w) { return w->status.ok && !w->finished && helix__awriter_send(w, false); }

const char *helix_awriter_finish(helix_artifact_writer *w) {
  if (!w->status.ok || w->finished) return w->status.ok ? w->written.artifact_id : 0;
  bool ok = helix__awriter_send(w, true);
  w->finished = true;
  helix_free(w->buffer);
  w->buffer = 0;
  return ok ? w->written.artifact_id : 0;
}

/* ---- http and secrets ------------------------------------------------------------------------------- */

helix_status helix_http_request(const char *method, const char *url, const char *headers_json, const char *body, const char *body_encoding,
                                int64_t max_response_bytes, helix_http_response *out) {
  __builtin_memset(out, 0, sizeof *out);
  helix__buf args = helix__args();
  helix__arg_string(&args, "method", method ? method : "GET");
  helix__arg_string(&args, "url", url);
  if (headers_json) helix__arg_raw(&args, "headers", headers_json);
  if (body) helix__arg_string(&args, "body", body);
  if (body_encoding) helix__arg_string(&args, "body_encoding", body_encoding);
  if (max_response_bytes > 0) helix__arg_int(&args, "max_response_bytes", max_response_bytes);
  helix__args_end(&args);
  helix_status s = helix__call("http.request", &args, &out->reply);
  if (!s.ok) return s;
  const helix_value *r = out->reply.result;
  const helix_value *b = helix_get(r, "body");
  int64_t status;
  if (!helix_as_int(helix_get(r, "status"), &status) || !b || b->kind != HELIX_STRING || !helix_get_object(r, "headers")) {
    helix_reply_free(&out->reply);
    return helix__bad_result("http.request", "status");
  }
  out->status = (int32_t)status;
  out->headers = helix_get_object(r, "headers");
  out->body = b->string, out->body_length = b->length;
  out->body_encoding = helix__str_or_empty(r, "body_encoding");
  out->url = helix__str_or_empty(r, "url");
  return s;
}

helix_status helix_http_get(const char *url, const char *headers_json, helix_http_response *out) {
  return helix_http_request("GET", url, headers_json, 0, 0, 0, out);
}

const char *helix_http_header(const helix_http_response *response, const char *name) {
  const helix_value *h = response->headers;
  if (!h) return 0;
  for (size_t i = 0; i < h->length; i++) {
    const char *key = h->members[i].key;
    size_t k = 0;
    for (; key[k] && name[k]; k++) {
      char a = key[k], b = name[k];
      if (a >= 'A' && a <= 'Z') a = (char)(a + 32);
      if (b >= 'A' && b <= 'Z') b = (char)(b + 32);
      if (a != b) break;
    }
    if (!key[k] && !name[k] && h->members[i].value->kind == HELIX_STRING) return h->members[i].value->string;
  }
  return 0;
}

helix_status helix_secrets_get(const char *name, helix_secret *out) {
  __builtin_memset(out, 0, sizeof *out);
  helix__buf args = helix__args();
  helix__arg_string(&args, "name", name);
  helix__args_end(&args);
  const helix_value *value;
  helix_status s = helix__call_field("secrets.get", &args, &out->reply, "value", HELIX_STRING, &value);
  if (s.ok) out->value = value->string;
  return s;
}

#endif /* HELIX_IMPLEMENTATION_DONE */
#endif /* HELIX_IMPLEMENTATION */
