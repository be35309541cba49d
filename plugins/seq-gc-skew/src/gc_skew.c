/* seq.gc_skew: GC skew (G-C)/(G+C) in fixed windows along every record of a FASTA artifact
 * (plain or gzip), streamed line by line with the C SDK's artifact reader and written as a TSV
 * artifact with the running (cumulative) skew, whose minimum marks a bacterial origin of
 * replication. Built by `npm run build:wasm` with clang (no libc) against sdk-guest/c/helix.h. */
#define HELIX_IMPLEMENTATION
#include "helix.h"

/* One record's running state. */
typedef struct skew_state {
  char *name;          /* first word of the header */
  int64_t position;    /* bases seen in the record */
  int64_t window_start;
  int64_t g, c;        /* in the current window */
  double cumulative;   /* sum of window skews so far */
} skew_state;

/* What each byte of a sequence line is: another base (every byte not listed), whitespace to
 * skip, G or C. */
enum { BASE, SKIP, G, C };
static const unsigned char BASE_KIND[256] = {[' '] = SKIP, ['\t'] = SKIP, ['\r'] = SKIP, ['G'] = G, ['g'] = G, ['C'] = C, ['c'] = C};

typedef struct totals {
  int64_t records, bases, windows;
} totals;

static double skew_of(int64_t g, int64_t c) { return g + c == 0 ? 0.0 : (double)(g - c) / (double)(g + c); }

/* Writes the current window as one TSV line: name, start, end (0-based, end exclusive), skew, cumulative. */
static bool emit_window(helix_artifact_writer *out, skew_state *s, totals *t) {
  double skew = skew_of(s->g, s->c);
  s->cumulative += skew;
  char *line = helix_format("%s\t%lld\t%lld\t%g\t%g", s->name, (long long)s->window_start, (long long)s->position, skew, s->cumulative);
  bool ok = helix_awriter_write_line(out, line, helix_strlen(line));
  helix_free(line);
  t->windows++;
  s->window_start = s->position;
  s->g = s->c = 0;
  return ok;
}

static helix_result handle(const helix_value *input) {
  const char *id = helix_get_string(input, "fasta");
  int64_t window = helix_get_int(input, "window", 1000);
  if (!id) return helix_error(HELIX_INVALID_INPUT, "fasta is required", "pass {\"fasta\": \"art_...\"}, the id of an imported FASTA artifact");
  if (window < 1) return helix_error(HELIX_INVALID_INPUT, "window must be at least 1", "pass a window size in bases, e.g. 1000");

  helix_artifact_info info;
  helix_status st = helix_artifact_stat(id, &info);
  if (!st.ok) return helix_status_to_result(&st, helix_format("artifact.stat %s", id));
  bool gzip = info.is_gzip;
  helix_reply_free(&info.reply);

  helix_artifact_reader reader;
  helix_reader_init(&reader, id, gzip);
  helix_artifact_writer out;
  helix_awriter_init(&out, "skew", "tsv", "GC skew windows");
  helix_awriter_write_string(&out, "record\tstart\tend\tgc_skew\tcumulative_skew\n");

  skew_state s = {0};
  totals t = {0};
  const char *line;
  size_t length;
  while (helix_reader_next_line(&reader, &line, &length)) {
    if (length > 0 && line[0] == '>') {
      if (s.name && s.position > s.window_start && !emit_window(&out, &s, &t)) break;
      helix_free(s.name);
      size_t n = 1;
      while (n < length && line[n] != ' ' && line[n] != '\t') n++;
      s = (skew_state){.name = helix_strndup(line + 1, n - 1)};
      t.records++;
      continue;
    }
    /* The hot loop keeps its counters in locals (fuel is charged per instruction) and writes
     * them back around each window it emits. */
    int64_t position = s.position, start = s.window_start, g = s.g, c = s.c, bases = 0;
    for (size_t i = 0; i < length; i++) {
      unsigned char kind = BASE_KIND[(unsigned char)line[i]];
      if (kind == SKIP) continue;
      if (!s.name) {
        helix_reader_close(&reader);
        return helix_error_details(HELIX_DATA_FORMAT, helix_format("%s is not FASTA: line %lld holds sequence before any '>' header", id, (long long)reader.line_number),
                                   "pass a FASTA artifact: every record starts with a line '>name'", helix_format("{\"line\":%lld}", (long long)reader.line_number));
      }
      g += kind == G;
      c += kind == C;
      position++;
      bases++;
      if (position - start == window) {
        s.position = position, s.g = g, s.c = c;
        if (!emit_window(&out, &s, &t)) break;
        start = s.window_start, g = c = 0;
      }
    }
    s.position = position, s.g = g, s.c = c;
    t.bases += bases;
    if (!out.status.ok) break;
  }
  if (reader.status.ok && out.status.ok && s.name && s.position > s.window_start) emit_window(&out, &s, &t);
  helix_reader_close(&reader);
  if (!reader.status.ok) return helix_status_to_result(&reader.status, helix_format("artifact.read %s", id));
  if (t.records == 0) return helix_error(HELIX_DATA_FORMAT, helix_format("%s holds no FASTA records", id), "pass a FASTA artifact: every record starts with a line '>name'");
  const char *skew_id = helix_awriter_finish(&out);
  if (!skew_id) return helix_status_to_result(&out.status, "artifact.write skew");

  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_key(&w, "skew"), helix_w_string(&w, skew_id);
  helix_w_key(&w, "records"), helix_w_int(&w, t.records);
  helix_w_key(&w, "bases"), helix_w_int(&w, t.bases);
  helix_w_key(&w, "windows"), helix_w_int(&w, t.windows);
  helix_w_key(&w, "window"), helix_w_int(&w, window);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
