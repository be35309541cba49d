// A deterministic FASTQ generator for the benchmark: reads of 100-150 bases with Illumina-like
// qualities, streamed to a file in 4 MiB pieces (never whole in memory), the same bytes for the
// same seed and size. `node dist/bench/fastq-gen.js OUT SIZE [SEED]` writes one (SIZE: 200M, 4G).
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What generateFastq wrote. */
export interface FastqFigures {
  readonly bytes: number;
  readonly records: number;
  readonly bases: number;
}

/** Options of generateFastq; the file ends at the first whole record at or past `bytes`. */
export interface FastqOptions {
  readonly bytes: number;
  /** Default 1. */
  readonly seed?: number;
  /** Shortest and longest read, default 100 and 150. */
  readonly minLength?: number;
  readonly maxLength?: number;
}

const PIECE = 4 * 1024 * 1024;
const BASES = Buffer.from('ACGT');

/**
 * Writes a FASTQ file of about `bytes` bytes: `@read<n>` headers, read lengths uniform in
 * [minLength, maxLength], uniform bases, and per read a quality level (phred 6-40) around which
 * each base's quality varies by up to 6 either way, so a mean-quality filter at 16 drops a share
 * of the reads and a length filter at 120 another.
 */
export function generateFastq(file: string, options: FastqOptions): FastqFigures {
  const minLength = options.minLength ?? 100;
  const maxLength = options.maxLength ?? 150;
  const next = sfc32(options.seed ?? 1);
  const fd = openSync(file, 'w');
  const piece = Buffer.allocUnsafe(PIECE + 2 * maxLength + 64);
  let at = 0;
  let bytes = 0;
  let records = 0;
  let bases = 0;
  try {
    while (bytes + at < options.bytes) {
      const length = minLength + (next() % (maxLength - minLength + 1));
      at += piece.write(`@read${records}\n`, at, 'latin1');
      for (let i = 0; i < length; i += 16) {
        let r = next();
        for (let j = i; j < Math.min(length, i + 16); j++, r >>>= 2) piece[at++] = BASES[r & 3]!;
      }
      piece[at++] = 0x0a;
      piece[at++] = 0x2b;
      piece[at++] = 0x0a;
      const level = 6 + (next() % 35);
      for (let i = 0; i < length; i += 4) {
        let r = next();
        for (let j = i; j < Math.min(length, i + 4); j++, r >>>= 8) {
          const q = level - 6 + ((r & 0xff) % 13);
          piece[at++] = 33 + Math.min(41, Math.max(2, q));
        }
      }
      piece[at++] = 0x0a;
      records += 1;
      bases += length;
      if (at >= PIECE) {
        writeSync(fd, piece, 0, at);
        bytes += at;
        at = 0;
      }
    }
    if (at > 0) writeSync(fd, piece, 0, at);
    bytes += at;
  } finally {
    closeSync(fd);
  }
  return { bytes, records, bases };
}

/** A small fast PRNG (sfc32) of unsigned 32-bit values, seeded by one integer. */
function sfc32(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const step = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) step();
  return step;
}

/** Bytes of a size such as `200M`, `4G`, `512K` or `1000` (binary multiples: 1M = 2^20). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(text.trim());
  if (m === null) throw new Error(`not a size: ${JSON.stringify(text)} (write e.g. 200M, 4G, 512K)`);
  const unit = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Math.round(Number(m[1]) * unit);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [out, size, seed] = process.argv.slice(2);
  if (out === undefined || size === undefined) {
    process.stderr.write('usage: node dist/bench/fastq-gen.js OUT SIZE [SEED]   (SIZE e.g. 200M, 4G)\n');
    process.exit(2);
  }
  const f = generateFastq(out, { bytes: parseSize(size), seed: seed === undefined ? 1 : Number(seed) });
  process.stdout.write(`${out}: ${f.bytes} bytes, ${f.records} reads, ${f.bases} bases\n`);
}
