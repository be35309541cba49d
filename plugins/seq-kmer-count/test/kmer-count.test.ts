// seq.kmer_count through the real host (createHost, LMDB, the WASM engine and its limits)
// against a JS counter: random FASTA and FASTQ (multi-line, lowercase, N runs and IUPAC codes,
// CR LF, gzip), k from 1 to 31, canonical or not, top-N order, the TSV table, a file larger
// than the guest's memory ceiling, and the refusal when distinct k-mers outgrow the table.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackHost, type PackHost } from '../../../test/helpers/pack-host.js';

const TOOL = 'seq.kmer_count';
const PACK = fileURLToPath(new URL('..', import.meta.url));
/** The table's capacity (assembly/table.ts): three quarters of 2^20 slots. */
const MAX_DISTINCT = 786_432;
let packs: PackHost;

beforeAll(async () => {
  packs = await startPackHost(['seq-kmer-count']);
}, 180_000);
afterAll(async () => {
  await packs?.close();
});

// ---- the JS reference -----------------------------------------------------------------

/** The sequences of a FASTA or FASTQ text, without line ends, spaces or tabs. */
function sequences(text: string): string[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const out: string[] = [];
  if (text.trimStart().startsWith('@')) {
    // Generated FASTQ has no empty sequences, so blank lines only separate records.
    const records = lines.filter((l) => l !== '');
    for (let i = 0; i + 1 < records.length; i += 4) out.push(records[i + 1]!);
  } else {
    for (const line of lines) {
      if (line.startsWith('>')) out.push('');
      else if (out.length > 0) out[out.length - 1] += line;
    }
  }
  return out.map((s) => s.replace(/[ \t]/g, ''));
}

const COMPLEMENT: Record<string, string> = { A: 'T', C: 'G', G: 'C', T: 'A' };
const revcomp = (s: string) =>
  [...s]
    .reverse()
    .map((c) => COMPLEMENT[c])
    .join('');

interface Counted {
  counts: Map<string, number>;
  records: number;
  bases: number;
  other: number;
  total: number;
}

/** Counts k-mers the slow, obvious way: every window of k upper-cased A/C/G/T letters. */
function reference(text: string, k: number, canonical = false): Counted {
  const counts = new Map<string, number>();
  let bases = 0,
    other = 0,
    total = 0;
  const records = sequences(text);
  for (const sequence of records) {
    const upper = sequence.toUpperCase();
    bases += (upper.match(/[ACGT]/g) ?? []).length;
    other += upper.length - (upper.match(/[ACGT]/g) ?? []).length;
    for (const stretch of upper.split(/[^ACGT]+/)) {
      for (let i = 0; i + k <= stretch.length; i++) {
        let kmer = stretch.slice(i, i + k);
        if (canonical) {
          const rc = revcomp(kmer);
          if (rc < kmer) kmer = rc;
        }
        counts.set(kmer, (counts.get(kmer) ?? 0) + 1);
        total++;
      }
    }
  }
  return { counts, records: records.length, bases, other, total };
}

function expectedOutput(ref: Counted, k: number, canonical: boolean, top: number, minCount = 1): Record<string, unknown> {
  const ranked = [...ref.counts].sort(([a, ca], [b, cb]) => cb - ca || (a < b ? -1 : 1));
  return {
    k,
    canonical,
    records: ref.records,
    bases: ref.bases,
    other_characters: ref.other,
    total_kmers: ref.total,
    distinct_kmers: ref.counts.size,
    table_rows: [...ref.counts.values()].filter((c) => c >= minCount).length,
    top: ranked.slice(0, top).map(([kmer, count]) => ({ kmer, count })),
  };
}

function expectedTable(ref: Counted, minCount = 1): string {
  const rows = [...ref.counts].filter(([, c]) => c >= minCount).sort(([a], [b]) => (a < b ? -1 : 1));
  return `kmer\tcount\n${rows.map(([kmer, count]) => `${kmer}\t${count}\n`).join('')}`;
}

// ---- generated input ------------------------------------------------------------------

/** mulberry32: a small seeded generator with a full 2^32 period (a float LCG repeats far sooner). */
function generator(seed: number) {
  return (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
  };
}

/** Random FASTA: wrapped at random widths, lowercase, N runs, IUPAC codes, blank lines, spaces. */
function randomFasta(seed: number, records: number, { eol = '\n', maxLength = 2000, alphabet = 'ACGTACGTACGTacgtRYN' } = {}): string {
  const rand = generator(seed);
  let out = '';
  for (let r = 0; r < records; r++) {
    out += `>r${r} some description${eol}`;
    const length = rand(5) === 0 ? rand(20) : rand(maxLength);
    let sequence = '';
    while (sequence.length < length)
      sequence += rand(40) === 0 ? 'N'.repeat(1 + rand(30)) : rand(200) === 0 ? ' ' : alphabet[rand(alphabet.length)];
    const width = 1 + rand(100);
    for (let i = 0; i < sequence.length; i += width) out += sequence.slice(i, i + width) + eol + (rand(30) === 0 ? eol : '');
  }
  return out;
}

/** seq.kmer_count's output (schemas/output.json). */
interface KmerOutput {
  table: string;
  k: number;
  canonical: boolean;
  records: number;
  bases: number;
  other_characters: number;
  total_kmers: number;
  distinct_kmers: number;
  table_rows: number;
  top: Array<{ kmer: string; count: number }>;
}

async function count(data: string | Uint8Array, input: Record<string, unknown>): Promise<{ output: KmerOutput; table: string }> {
  const output = await packs.ok<KmerOutput>(TOOL, { fasta: await packs.put(data), ...input });
  return { output, table: (await packs.bytes(output.table)).toString('utf8') };
}

// ---- tests ----------------------------------------------------------------------------

describe('seq.kmer_count against the JS counter', () => {
  for (const [k, canonical, top] of [
    [1, false, 4],
    [2, true, 16],
    [3, false, 10],
    [5, true, 20],
    [11, false, 25],
    [21, true, 5],
    [31, false, 3],
    [31, true, 3],
  ] as const) {
    it(`agrees for k=${k}${canonical ? ', canonical' : ''}, top ${top}`, async () => {
      for (const seed of [1, 2]) {
        const text = randomFasta(seed * 10 + k, 6 + seed * 4, { eol: seed === 2 ? '\r\n' : '\n' });
        const ref = reference(text, k, canonical);
        const { output, table } = await count(text, { k, canonical, top });
        const { table: _id, ...rest } = output;
        expect({ seed, output: rest }).toEqual({ seed, output: expectedOutput(ref, k, canonical, top) });
        expect(table === expectedTable(ref)).toBe(true);
      }
    });
  }

  it('breaks ties in the top list by k-mer and keeps counts exact with many repeats', async () => {
    const text = '>a\nAAAAAAAAAA\n>b\nCCCCCCCCCCAC\n>c\nttttttttttgggg\n';
    const { output } = await count(text, { k: 2, top: 6 });
    // AA, CC and TT each 9 times (windows of 10 identical letters), then the singletons in order.
    expect(output.top).toEqual([
      { kmer: 'AA', count: 9 },
      { kmer: 'CC', count: 9 },
      { kmer: 'TT', count: 9 },
      { kmer: 'GG', count: 3 },
      { kmer: 'AC', count: 1 },
      { kmer: 'CA', count: 1 },
    ]);
    expect(output).toMatchObject({ total_kmers: 9 + 11 + 13, distinct_kmers: 7 });
  });

  it('reads gzip input and FASTQ records', async () => {
    const text = randomFasta(77, 10);
    const ref = reference(text, 7, true);
    expect((await count(gzipSync(text), { k: 7, canonical: true, top: 10 })).output).toMatchObject(expectedOutput(ref, 7, true, 10));
    const rand = generator(8);
    let fastq = '';
    for (let r = 0; r < 40; r++) {
      const sequence = Array.from({ length: 1 + rand(150) }, () => 'ACGTNacgt'[rand(9)]).join('');
      fastq += `@read${r}\n${sequence}\n+\n${'F'.repeat(sequence.length)}\n`;
    }
    const fq = await count(fastq, { k: 9, top: 7 });
    expect(fq.table === expectedTable(reference(fastq, 9))).toBe(true);
    const { table: _id, ...rest } = fq.output;
    expect(rest).toEqual(expectedOutput(reference(fastq, 9), 9, false, 7));
  });

  it('writes only k-mers seen min_count times to the table, totals unchanged', async () => {
    const text = randomFasta(5, 8, { alphabet: 'ACGT' });
    const ref = reference(text, 4);
    const { output, table } = await count(text, { k: 4, min_count: 3, top: 0 });
    expect(table === expectedTable(ref, 3)).toBe(true);
    const { table: _id, ...rest } = output;
    expect(rest).toEqual(expectedOutput(ref, 4, false, 0, 3));
  });

  it('handles input without k-mers: no records, records shorter than k, only N', async () => {
    for (const text of ['', '>a\n>b\nACG\n', '>n\nNNNNNNNNNNNNNNN\n']) {
      const { output, table } = await count(text, { k: 4 });
      expect(output).toMatchObject({ total_kmers: 0, distinct_kmers: 0, table_rows: 0, top: [] });
      expect(table).toBe('kmer\tcount\n');
    }
  });
});

describe('seq.kmer_count errors', () => {
  it('refuses more distinct k-mers than its table holds with I-REQ-TOO-LARGE, and takes exactly that many', async () => {
    const rand = generator(3);
    const genome = Array.from({ length: MAX_DISTINCT + 31 }, () => 'ACGT'[rand(4)]).join('');
    const fits = `>fits\n${genome.slice(0, MAX_DISTINCT + 30)}\n`;
    expect(reference(fits, 31).counts.size).toBe(MAX_DISTINCT);
    const full = await packs.call(TOOL, { fasta: await packs.put(fits), k: 31, top: 1 });
    expect(full.output).toMatchObject({ distinct_kmers: MAX_DISTINCT, total_kmers: MAX_DISTINCT });
    expect(full.metrics.memory_peak_pages).toBeLessThanOrEqual(packs.tool(TOOL).loaded.manifest.limits.maxMemoryPages!);
    process.stdout.write(`seq.kmer_count: full table (${MAX_DISTINCT} 31-mers): ${full.metrics.memory_peak_pages} pages\n`);
    const error = await packs.error(TOOL, { fasta: await packs.put(`>over\n${genome}\n`), k: 31 });
    expect(error).toMatchObject({ code: 'I-REQ-TOO-LARGE', details: { k: 31, max_distinct_kmers: MAX_DISTINCT, record: 1 } });
    expect(error.message).toMatch(/^more than 786432 distinct 31-mers/);
    expect(error.hint).toMatch(/lower k/);
  }, 120_000);

  it('refuses text that is not FASTA or FASTQ with D-DATA-FORMAT, and k outside 1..31 before running', async () => {
    expect(await packs.error(TOOL, { fasta: await packs.put('k\tcount\nAC\t3\n'), k: 2 })).toMatchObject({
      code: 'D-DATA-FORMAT',
      details: { line: 1 },
    });
    const response = await packs.call(TOOL, { fasta: await packs.put('>a\nACGT\n'), k: 32 });
    expect(response).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-INPUT' } });
  });

  it("passes its fixtures through the host fixture runner, whose expectations are the JS counter's", async () => {
    const results = await packs.fixtures(TOOL);
    expect(results.map((r) => r.fixture)).toEqual([
      'missing-artifact.json',
      'not-fasta.json',
      'small-canonical.json',
      'small-gzip.json',
      'small.json',
    ]);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const text = await readFile(path.join(PACK, 'data/small.fa'), 'utf8');
    for (const [name, canonical] of [
      ['small.json', false],
      ['small-canonical.json', true],
    ] as const) {
      const fixture = JSON.parse(await readFile(path.join(PACK, 'fixtures', name), 'utf8'));
      const ref = reference(text, fixture.input.k, canonical);
      const { table, ...expected } = fixture.expect.output;
      expect(expected).toEqual(expectedOutput(ref, fixture.input.k, canonical, fixture.input.top));
      expect(await readFile(path.join(PACK, table.slice('@artifact:'.length)), 'utf8')).toBe(expectedTable(ref));
    }
  });
});

describe('seq.kmer_count limits', () => {
  it('streams a file larger than its memory ceiling, within the fuel budget', async () => {
    const manifest = packs.tool(TOOL).loaded.manifest;
    const ceiling = manifest.limits.maxMemoryPages! * 65536;
    // Whole records repeated: the counts are the block's counts times the repeats.
    const block = randomFasta(99, 300, { maxLength: 4000 });
    const repeats = Math.ceil((ceiling + 1) / block.length);
    const text = block.repeat(repeats);
    expect(text.length).toBeGreaterThan(ceiling);
    const response = await packs.call(TOOL, { fasta: await packs.put(text), k: 21, canonical: true, top: 5 });
    expect(response.status).toBe('success');
    const ref = reference(block, 21, true);
    for (const [kmer, n] of ref.counts) ref.counts.set(kmer, n * repeats);
    const { table: id, ...rest } = response.output as KmerOutput;
    expect(rest).toEqual(
      expectedOutput(
        { ...ref, records: ref.records * repeats, bases: ref.bases * repeats, other: ref.other * repeats, total: ref.total * repeats },
        21,
        true,
        5,
      ),
    );
    expect((await packs.bytes(id)).toString('utf8') === expectedTable(ref)).toBe(true);
    expect(response.metrics.memory_peak_pages).toBeLessThanOrEqual(manifest.limits.maxMemoryPages!);
    const perByte = response.metrics.fuel_used / text.length;
    // The README's sizing: at this rate 50 MB of FASTA fits the manifest's budget.
    expect(perByte * 50e6).toBeLessThan(manifest.limits.fuel!);
    process.stdout.write(
      `seq.kmer_count: ${text.length} bytes, k=21 canonical, ${response.metrics.fuel_used} fuel, ${perByte.toFixed(2)} fuel/byte, ${response.metrics.memory_peak_pages} pages\n`,
    );
  }, 180_000);
});
