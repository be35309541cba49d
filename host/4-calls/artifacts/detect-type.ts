// Type detection from an artifact's first bytes: magic numbers for binary formats, and for text
// (decompressed first when gzip) the shape of the first lines: FASTA, FASTQ, VCF, SAM, JSON, CSV...
import { constants, gunzipSync } from 'node:zlib';
import { isText, sniffText } from './sniff-text.js';

/** How many first bytes detection looks at (raw, and decompressed for gzip). */
export const HEAD_BYTES = 64 * 1024;

/** What detection concludes. `compression` is set when `type` is that of the decompressed content. */
export interface DetectedType {
  readonly type: string;
  readonly compression: 'gzip' | null;
  readonly media_type: string;
}

/** Media types of the types Helix detects; an unknown override falls back to text or octet-stream. */
export const MEDIA_TYPES: Readonly<Record<string, string>> = {
  fasta: 'text/x-fasta',
  fastq: 'text/x-fastq',
  vcf: 'text/x-vcf',
  sam: 'text/x-sam',
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  text: 'text/plain',
  png: 'image/png',
  pdf: 'application/pdf',
  zip: 'application/zip',
  bam: 'application/x-bam',
  gzip: 'application/gzip',
  binary: 'application/octet-stream',
  empty: 'application/octet-stream',
};

const MAGIC: ReadonlyArray<readonly [string, readonly number[]]> = [
  ['png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['zip', [0x50, 0x4b, 0x03, 0x04]],
  ['bam', [0x42, 0x41, 0x4d, 0x01]],
];

const startsWith = (bytes: Uint8Array, magic: readonly number[]): boolean =>
  bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);

/** Whether bytes start with the gzip magic number. */
export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * The first at most `maxOut` decompressed bytes of a gzip head, or null when it is not valid
 * gzip. `complete` tells whether that is all the content (the head was the whole file and the
 * limit was not reached).
 */
export function gunzipHead(head: Uint8Array, headIsWhole: boolean, maxOut = HEAD_BYTES): { bytes: Buffer; complete: boolean } | null {
  // A compressed head can expand about a thousandfold, so the output is capped; past the cap,
  // a shorter prefix is tried instead of inflating it all (a gzip bomb costs nothing here).
  let input = head;
  for (;;) {
    try {
      const bytes = gunzipSync(input, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: maxOut });
      return { bytes, complete: headIsWhole && input === head };
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' && input.length > 32) {
        input = input.subarray(0, input.length >> 1);
        continue;
      }
      return null;
    }
  }
}

/** The detected type of uncompressed content from its first bytes. */
function detectPlain(head: Uint8Array, complete: boolean): string {
  if (head.length === 0) return 'empty';
  for (const [type, magic] of MAGIC) if (startsWith(head, magic)) return type;
  if (!isText(head, complete)) return 'binary';
  return sniffText(Buffer.from(head.buffer, head.byteOffset, head.length).toString('utf8'), complete);
}

/** Whether content of this type is text, so a text preview makes sense. */
export function isTextType(type: string): boolean {
  return !['png', 'pdf', 'zip', 'bam', 'gzip', 'binary', 'empty'].includes(type);
}

/**
 * Detects the type of content from its first bytes (`head`, ideally HEAD_BYTES of them). For a
 * gzip head the inner content is detected: fastq in gzip is `{type: 'fastq', compression: 'gzip'}`;
 * gzip of unknown content is type `gzip` without compression. `complete` says whether `head` is
 * the whole content (it makes JSON and the last line of delimited text decidable).
 */
export function detectType(head: Uint8Array, options: { complete?: boolean } = {}): DetectedType {
  const complete = options.complete ?? false;
  const window = head.subarray(0, HEAD_BYTES);
  const whole = complete && head.length <= HEAD_BYTES;
  if (isGzip(window)) {
    const inner = gunzipHead(window, whole);
    const type = inner === null ? 'gzip' : detectPlain(inner.bytes, inner.complete);
    if (type === 'binary' || type === 'empty' || type === 'gzip') return { type: 'gzip', compression: null, media_type: MEDIA_TYPES.gzip! };
    return { type, compression: 'gzip', media_type: MEDIA_TYPES[type]! };
  }
  const type = detectPlain(window, whole);
  return { type, compression: null, media_type: MEDIA_TYPES[type]! };
}

/**
 * Applies a type override to what was detected: the compression stays what the bytes are, the
 * media type follows the override (text/plain or octet-stream for a type Helix does not know).
 */
export function withTypeOverride(detected: DetectedType, type: string | undefined, contentIsText: boolean): DetectedType {
  if (type === undefined || type === detected.type) return detected;
  if (type === 'gzip') return { type, compression: null, media_type: MEDIA_TYPES.gzip! };
  const compression = detected.compression ?? (detected.type === 'gzip' ? 'gzip' : null);
  const media_type = MEDIA_TYPES[type] ?? (contentIsText ? 'text/plain' : 'application/octet-stream');
  return { type, compression, media_type };
}
