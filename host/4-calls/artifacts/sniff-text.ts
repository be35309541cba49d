// Text sniffing: whether bytes are UTF-8 text, and which text format their first lines have.
// Heuristics on a head that may end mid-line: the last, partial line is only used where a
// prefix can be judged (its characters), never where its length matters.

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** A sequence line: residue letters, gaps and stop codons. */
const SEQUENCE = /^[A-Za-z*.-]+$/;
const SAM_HEADER = /^@(?:HD|SQ|RG|PG|CO)\t/;
/** How many first lines the line-shape checks look at. */
const SNIFF_LINES = 20;

/**
 * Whether bytes are UTF-8 text: valid UTF-8 (a sequence cut by the end of a partial head is
 * forgiven), no NUL, and almost no other control characters.
 */
export function isText(bytes: Uint8Array, complete: boolean): boolean {
  let text: string | undefined;
  // A head cut mid-character leaves up to 3 bytes of an incomplete sequence at the end.
  for (let drop = 0; drop <= (complete ? 0 : 3) && text === undefined; drop++) {
    try {
      text = utf8.decode(bytes.subarray(0, bytes.length - drop));
    } catch {
      text = undefined;
    }
  }
  if (text === undefined) return false;
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return false;
    if (c < 32 && c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 27) controls++;
  }
  return controls * 100 <= text.length;
}

/** Drops a carriage return left by a CRLF line end. */
const unCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

/**
 * The first complete lines, without line ends, and `partial`: the trailing line cut by the end
 * of an incomplete head (null when the head ends at a line end or is the whole text).
 */
function firstLines(text: string, complete: boolean): { lines: string[]; partial: string | null } {
  const segments = text.split('\n', SNIFF_LINES + 2);
  if (segments.length > SNIFF_LINES + 1) return { lines: segments.slice(0, SNIFF_LINES).map(unCr), partial: null };
  const last = segments.pop() ?? '';
  if (complete && last !== '') segments.push(last);
  return { lines: segments.map(unCr), partial: !complete && last !== '' ? unCr(last) : null };
}

/** FASTQ: an @ header, a sequence, a + line, a quality line as long as the sequence. */
function looksLikeFastq(lines: string[], partial: string | null, more: boolean): boolean {
  const [header, seq, plus, qual] = lines;
  if (header === undefined || header.length < 2 || !header.startsWith('@')) return false;
  // A long read can fill the whole head: an @ header and the start of a sequence line is enough.
  if (seq === undefined) return more && partial !== null && SEQUENCE.test(partial);
  if (!SEQUENCE.test(seq)) return false;
  if (plus === undefined) return more && (partial === null || partial.startsWith('+'));
  if (!plus.startsWith('+')) return false;
  if (qual === undefined) return more && (partial === null || partial.length <= seq.length);
  return qual.length === seq.length;
}

/** FASTA: a > header, then only headers, sequence lines and blank lines, at least one sequence line. */
function looksLikeFasta(lines: string[], partial: string | null, more: boolean): boolean {
  const first = lines[0] ?? partial;
  if (first === null || first === undefined || !first.startsWith('>')) return false;
  const rest = lines.length === 0 ? [] : partial === null ? lines.slice(1) : [...lines.slice(1), partial];
  let sequences = 0;
  for (const line of rest) {
    if (line.startsWith('>') || line === '') continue;
    if (!SEQUENCE.test(line)) return false;
    sequences++;
  }
  // A header that fills the whole head leaves nothing to judge but its own > .
  return sequences > 0 || (more && rest.length === 0);
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A truncated JSON document: an object opening with a key, or an array opening with a value. */
function looksLikeJsonPrefix(text: string): boolean {
  const t = text.trimStart();
  const next = t.slice(1).trimStart()[0];
  if (t.startsWith('{')) return next === undefined || next === '"' || next === '}';
  if (t.startsWith('[')) return next === undefined || /["{[\]\-0-9tfn]/.test(next);
  return false;
}

/** Whether every line holds the same number (at least 2) of fields for `delimiter`. */
function consistentFields(lines: string[], delimiter: string): boolean {
  const rows = lines.filter((l) => l !== '' && !l.startsWith('#'));
  if (rows.length < 2) return false;
  const count = (line: string): number => {
    if (delimiter === '\t') return line.split('\t').length;
    // Commas inside double-quoted fields do not separate fields ("" is an escaped quote).
    let fields = 1;
    let quoted = false;
    for (const ch of line) {
      if (ch === '"') quoted = !quoted;
      else if (ch === delimiter && !quoted) fields++;
    }
    return fields;
  };
  const n = count(rows[0]!);
  return n >= 2 && rows.every((r) => count(r) === n);
}

/**
 * The format of text from its first characters; `complete` says whether `text` is all of it.
 * Returns fasta, fastq, vcf, sam, json, jsonl, tsv, csv or text.
 */
export function sniffText(text: string, complete: boolean): string {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const { lines, partial } = firstLines(body, complete);
  const more = !complete;
  if (body.startsWith('##fileformat=VCF')) return 'vcf';
  if (SAM_HEADER.test(body)) return 'sam';
  if (looksLikeFastq(lines, partial, more)) return 'fastq';
  if (looksLikeFasta(lines, partial, more)) return 'fasta';
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    if (complete && parsesAsJson(body)) return 'json';
    const rows = lines.filter((l) => l.trim() !== '');
    if (rows.length >= 2 && rows.every((l) => /^\s*[[{]/.test(l) && parsesAsJson(l))) return 'jsonl';
    if (!complete && looksLikeJsonPrefix(body)) return 'json';
  }
  if (consistentFields(lines, '\t')) return 'tsv';
  if (consistentFields(lines, ',')) return 'csv';
  return 'text';
}
