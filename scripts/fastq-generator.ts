// A deterministic FASTQ generator for tests and benchmarks of real-size data: streams a file of
// any size to disk in bounded pieces (never whole in memory) and knows the figures the tools must
// find in it (records, bases, lengths, GC, the reads a length and mean-quality filter keeps).
// `node dist/scripts/fastq-generator.js OUT SIZE [SEED]` writes one (SIZE: 200M, 4G).
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the generator wrote, as the tools should count it. */
export interface FastqFacts {
  readonly bytes: number;
  readonly records: number;
  readonly bases: number;
  readonly minLength: number;
  readonly maxLength: number;
  /** G and C bases (the sequences hold only A, C, G and T). */
  readonly gc: number;
  /** Reads of at least `filter.minLength` bases whose arithmetic mean phred is at least `filter.minMeanQuality`. */
  readonly keptRecords: number;
  readonly keptBases: number;
  /** Sum over the reads of (length - k + 1) for the k asked for. */
  readonly kmers: number;
}

/** The shape of the reads and the filter whose outcome to predict. */
export interface FastqShape {
  /** Stop after the record that makes the file at least this long. */
  readonly bytes: number;
  readonly seed?: number;
  readonly minReadLength?: number;
  readonly maxReadLength?: number;
  readonly filter?: { readonly minLength: number; readonly minMeanQuality: number };
  readonly k?: number;
}

// Reads are slices of fixed random pools at random offsets: a realistic mix of bases and
// qualities at the speed of a copy, with prefix sums that give each slice's GC and quality sum.
const POOL = 1 << 20;
const PIECE = 8 << 20;

/** mulberry32: a small seeded PRNG, so the same seed writes the same bytes everywhere. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pools(rand: () => number): { bases: Buffer; quals: Buffer; gcPrefix: Int32Array; qualPrefix: Int32Array } {
  const bases = Buffer.alloc(POOL);
  const quals = Buffer.alloc(POOL);
  const gcPrefix = new Int32Array(POOL + 1);
  const qualPrefix = new Int32Array(POOL + 1);
  const acgt = [0x41, 0x43, 0x47, 0x54];
  for (let i = 0; i < POOL; i++) {
    const b = acgt[Math.floor(rand() * 4)]!;
    // Phred 2..40, skewed high like a modern short-read run, with a tail of poor bases.
    const q = rand() < 0.15 ? 2 + Math.floor(rand() * 18) : 20 + Math.floor(rand() * 21);
    bases[i] = b;
    quals[i] = 33 + q;
    gcPrefix[i + 1] = gcPrefix[i]! + (b === 0x43 || b === 0x47 ? 1 : 0);
    qualPrefix[i + 1] = qualPrefix[i]! + q;
  }
  return { bases, quals, gcPrefix, qualPrefix };
}

/** Writes the FASTQ to `path` and returns what it holds. */
export async function generateFastq(path: string, shape: FastqShape): Promise<FastqFacts> {
  const rand = prng(shape.seed ?? 13);
  const { bases, quals, gcPrefix, qualPrefix } = pools(rand);
  const minL = shape.minReadLength ?? 100;
  const maxL = shape.maxReadLength ?? 150;
  const filter = shape.filter ?? { minLength: 0, minMeanQuality: 0 };
  const k = shape.k ?? 1;
  const out = Buffer.alloc(PIECE);
  const file = await open(path, 'w');
  let used = 0;
  let bytes = 0;
  const facts = { records: 0, bases: 0, minLength: Number.MAX_SAFE_INTEGER, maxLength: 0, gc: 0, keptRecords: 0, keptBases: 0, kmers: 0 };
  try {
    while (bytes < shape.bytes) {
      const length = minL + Math.floor(rand() * (maxL - minL + 1));
      const s = Math.floor(rand() * (POOL - length));
      const q = Math.floor(rand() * (POOL - length));
      const header = `@gen${facts.records} len=${length}\n`;
      const size = header.length + length + 3 + length + 1;
      if (used + size > PIECE) {
        await file.write(out, 0, used);
        used = 0;
      }
      used += out.write(header, used, 'latin1');
      used += bases.copy(out, used, s, s + length);
      out[used++] = 0x0a;
      out[used++] = 0x2b;
      out[used++] = 0x0a;
      used += quals.copy(out, used, q, q + length);
      out[used++] = 0x0a;
      bytes += size;
      facts.records++;
      facts.bases += length;
      facts.minLength = Math.min(facts.minLength, length);
      facts.maxLength = Math.max(facts.maxLength, length);
      facts.gc += gcPrefix[s + length]! - gcPrefix[s]!;
      if (length >= k) facts.kmers += length - k + 1;
      if (length >= filter.minLength && qualPrefix[q + length]! - qualPrefix[q]! >= filter.minMeanQuality * length) {
        facts.keptRecords++;
        facts.keptBases += length;
      }
    }
    await file.write(out, 0, used);
  } finally {
    await file.close();
  }
  return { bytes, ...facts };
}

/** Bytes of a size such as `200M`, `4G`, `512K` or `1000` (binary multiples: 1M = 2^20). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(text.trim());
  if (m === null) throw new Error(`not a size: ${JSON.stringify(text)} (write e.g. 200M, 4G, 512K)`);
  const unit = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Math.round(Number(m[1]) * unit);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [out, size, seed] = process.argv.slice(2);
  if (out === undefined || size === undefined) {
    process.stderr.write('usage: node dist/scripts/fastq-generator.js OUT SIZE [SEED]   (SIZE e.g. 200M, 4G)\n');
    process.exit(2);
  }
  const f = await generateFastq(out, { bytes: parseSize(size), ...(seed === undefined ? {} : { seed: Number(seed) }) });
  process.stdout.write(`${out}: ${f.bytes} bytes, ${f.records} reads, ${f.bases} bases\n`);
}
