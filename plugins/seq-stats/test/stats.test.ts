// seq.stats through the real host (built from source, artifacts in a temporary LMDB store),
// compared field by field with `seqkit stats -a -T` run on the same bytes: generated FASTA
// and FASTQ with the edge cases of real files, gzip, a file larger than the tool's memory
// ceiling, the fixtures, and the errors.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireError } from '../../../abi/index.js';
import { startPackHost, type PackHost } from '../../../test/helpers/pack-host.js';
import { fastqLargerThan, PLUGINS, randomFasta, randomFastq, runReference, scratchDir } from './sequences.js';

const TOOL = 'seq.stats';
let packs: PackHost;
const scratch = scratchDir();

beforeAll(async () => {
  packs = await startPackHost(['seq-stats']);
}, 180_000);

afterAll(async () => {
  await packs?.close();
  scratch.cleanup();
});

// seqkit's column names and the tool's output keys, in seqkit's order.
const COLUMNS: ReadonlyArray<[string, string]> = [
  ['format', 'format'],
  ['num_seqs', 'num_seqs'],
  ['sum_len', 'sum_len'],
  ['min_len', 'min_len'],
  ['avg_len', 'avg_len'],
  ['max_len', 'max_len'],
  ['Q1', 'q1'],
  ['Q2', 'q2'],
  ['Q3', 'q3'],
  ['sum_gap', 'sum_gap'],
  ['N50', 'n50'],
  ['Q20(%)', 'q20_pct'],
  ['Q30(%)', 'q30_pct'],
  ['GC(%)', 'gc_pct'],
];

/** `seqkit stats -a -T` of `data` (written to a file named `name`), as the tool's output object. */
async function seqkitStats(name: string, data: string | Uint8Array): Promise<Record<string, unknown>> {
  const file = scratch.file(name, data);
  const [header, row] = runReference('seqkit', ['stats', '-a', '-T', file])
    .trimEnd()
    .split('\n')
    .map((line) => line.split('\t'));
  const expected: Record<string, unknown> = {};
  for (const [column, key] of COLUMNS) {
    const text = row![header!.indexOf(column)]!;
    expected[key] = key === 'format' ? text : text === 'NaN' ? null : Number(text);
  }
  return expected;
}

/** seq.stats's output (schemas/output.json): seqkit stats -a's columns. */
interface StatsOutput {
  format: string;
  num_seqs: number;
  sum_len: number;
  min_len: number;
  avg_len: number;
  max_len: number;
  q1: number;
  q2: number;
  q3: number;
  sum_gap: number;
  n50: number;
  q20_pct: number | null;
  q30_pct: number | null;
  gc_pct: number | null;
}

async function stats(data: string | Uint8Array): Promise<{ output: StatsOutput; fuel: number; pages: number }> {
  const response = await packs.call(TOOL, { sequences: await packs.put(data) });
  if (response.status !== 'success') throw new Error(`expected success, got ${JSON.stringify(response.error)}`);
  return { output: response.output as StatsOutput, fuel: response.metrics.fuel_used, pages: response.metrics.memory_peak_pages };
}

async function failure(data: string | Uint8Array): Promise<WireError> {
  const response = await packs.call(TOOL, { sequences: await packs.put(data) });
  expect(response.status).toBe('terminal_error');
  if (response.error === undefined) throw new Error('expected an error');
  return response.error;
}

/** Calls the tool and seqkit on the same bytes and compares every field. */
async function agree(name: string, data: string | Uint8Array): Promise<StatsOutput> {
  const expected = await seqkitStats(name, data);
  const { output } = await stats(data);
  expect({ name, ...output }).toEqual({ name, ...expected });
  return output;
}

describe('seq.stats against seqkit stats -a -T', () => {
  it('agrees on generated multi-line FASTA: lowercase, N runs, gaps, spaces, empty records, blank lines, LF and CR LF', async () => {
    for (let seed = 1; seed <= 10; seed++) {
      const text = randomFasta(seed, { records: 1 + ((seed * 7) % 40), maxLength: seed % 3 === 0 ? 5000 : 300, crlf: seed % 2 === 0 });
      await agree(`gen-${seed}.fa`, text);
    }
  });

  it('agrees on generated FASTQ, LF and CR LF, with blank lines between records', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const text = randomFastq(100 + seed, { records: 1 + ((seed * 13) % 60), maxLength: 150, crlf: seed % 2 === 1 });
      const output = await agree(`gen-${seed}.fq`, text);
      expect(output.format).toBe('FASTQ');
    }
  });

  it('agrees on gzip-compressed FASTA and FASTQ', async () => {
    const fasta = gzipSync(randomFasta(41, { records: 30, maxLength: 2000, crlf: true }));
    expect((await agree('gen.fa.gz', fasta)).format).toBe('FASTA');
    const fastq = gzipSync(randomFastq(42, { records: 50, maxLength: 120 }));
    expect((await agree('gen.fq.gz', fastq)).format).toBe('FASTQ');
  });

  it('agrees on the quartile cases: odd and even counts, ties in the middle, one record, all lengths equal', async () => {
    const fasta = (lengths: number[]) => lengths.map((l, i) => `>r${i}\n${'ACGTN'.repeat(l).slice(0, l)}\n`).join('');
    for (const lengths of [
      [5],
      [4, 4, 4],
      [1, 2],
      [1, 2, 3],
      [3, 1, 2, 4],
      [2, 2, 2, 3, 3, 4, 8, 8],
      [0, 10, 11],
      [7, 7, 9],
      [10, 0],
      [1, 100, 100, 100, 5],
    ]) {
      await agree(`q-${lengths.join('-')}.fa`, fasta(lengths));
    }
  });

  it('agrees on records of 65,536 bases and more, beside short ones (N50 and quartiles across both length stores)', async () => {
    const lengths = [70_000, 65_536, 65_535, 12, 300_000, 65_536, 3, 0, 131_072];
    const text = lengths
      .map(
        (l, i) =>
          `>r${i}\n${
            'GATTACA'
              .repeat(Math.ceil(l / 7) + 1)
              .slice(0, l)
              .match(/.{1,80}/g)
              ?.join('\n') ?? ''
          }\n`,
      )
      .join('');
    await agree('long.fa', text);
  });

  it('agrees on an empty input, and on records that are all empty (seqkit NaN: null)', async () => {
    const empty = await agree('empty.fa', '');
    expect(empty).toMatchObject({ format: '', num_seqs: 0 });
    // Blank lines alone are no records (seqkit 2.3.0 reports one empty record for LF blank
    // lines and refuses CR LF or whitespace ones; see the README), and blank lines before the
    // first header change nothing.
    expect((await stats('\n\r\n \t\n')).output).toEqual(empty);
    const body = '>a\r\nACGT\r\n>b\r\nGG\r\n';
    expect((await stats(`\r\n  \r\n${body}`)).output).toEqual(await seqkitStats('body.fa', body));
    const noBases = await agree('no-bases.fa', '>a\n>b desc\n\n');
    expect(noBases).toMatchObject({ num_seqs: 2, sum_len: 0, gc_pct: null, q20_pct: null });
  });

  it('streams a gzip FASTQ whose content is larger than its memory ceiling, in bounded memory', async () => {
    const tool = packs.tool(TOOL);
    const ceiling = tool.limits.maxMemoryPages * 65536;
    // 4-line records of 100-150 bases, a quarter more than the ceiling.
    const text = fastqLargerThan(ceiling * 1.25, 1000, 100, 150);
    expect(text.length).toBeGreaterThan(ceiling);
    const gz = gzipSync(text);
    const expected = await seqkitStats('big.fq.gz', gz);
    const { output, fuel, pages } = await stats(gz);
    expect(output).toEqual(expected);
    expect(pages).toBeLessThanOrEqual(tool.limits.maxMemoryPages);
    // The README's sizing: fuel per byte of FASTQ, and the manifest's budget covering 100 MB.
    const perByte = fuel / text.length;
    expect(perByte * 100e6).toBeLessThan(tool.limits.fuel);
    console.log(`seq.stats: ${text.length} bytes of FASTQ, ${fuel} fuel (${perByte.toFixed(2)} per byte), peak ${pages} pages`);
  }, 240_000);

  it('spends few enough fuel per byte on 60-column FASTA and on short reads that the manifest budget covers 100 MB', async () => {
    const tool = packs.tool(TOOL);
    let fasta = '';
    for (let r = 0; r < 2000; r++)
      fasta += `>contig${r} len=1500\n${'ACGTNacgtGGCCAATT'
        .repeat(90)
        .slice(0, 1500)
        .match(/.{1,60}/g)!
        .join('\n')}\n`;
    const reads = randomFastq(77, { records: 20_000, minLength: 36, maxLength: 50 });
    for (const [name, text] of [
      ['60-column FASTA', fasta],
      ['36-50 base reads', reads],
    ] as const) {
      const { fuel } = await stats(text);
      const perByte = fuel / text.length;
      expect(perByte * 100e6).toBeLessThan(tool.limits.fuel);
      console.log(`seq.stats: ${name}, ${text.length} bytes, ${(perByte).toFixed(2)} fuel per byte`);
    }
  });
});

describe('seq.stats errors', () => {
  it('refuses text that is neither FASTA nor FASTQ with D-DATA-FORMAT naming the line', async () => {
    const error = await failure('\n  \nsample\tcount\nA1\t12\n');
    expect(error.code).toBe('D-DATA-FORMAT');
    expect(error.message).toBe(
      `reading ${error.details.artifact_id}: not FASTA or FASTQ: line 3: expected a header line starting with '>' (FASTA) or '@' (FASTQ), found 's' at column 1`,
    );
    expect(error.details).toMatchObject({ line: 3, record: 0 });
    expect(error.hint).toMatch(/FASTQ \(4-line records/);
  });

  it('refuses a FASTQ quality shorter or longer than its sequence, a missing + line and a truncated record', async () => {
    const shorter = await failure('@r1\nACGT\n+\nIIII\n@r2\r\nACGT\r\n+\r\nIII\r\n');
    expect(shorter).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 8, record: 2, sequence_length: 4, quality_length: 3 } });
    expect(shorter.message).toContain('the quality of record 2 (header on line 5) is shorter than its sequence (3 vs 4)');
    const longer = await failure('@r1\nACGT\n+\nIIIII\n');
    expect(longer).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 4, record: 1 } });
    const multiLine = await failure('@r1\nAC\nGT\n+\nIIII\n');
    expect(multiLine.message).toBe(
      `reading ${multiLine.details.artifact_id}: not FASTQ: line 3: expected the '+' line of record 1, found 'G' (multi-line FASTQ is not supported)`,
    );
    const truncated = await failure('@r1\nACGT\n+\nIIII\n@r2\nACGT\n');
    expect(truncated.message).toContain(
      "not FASTQ: line 6: the data ends inside record 2 (header on line 5), before its '+' and quality lines",
    );
    const badQuality = await failure('@r1\nACGT\n+\nII I\n');
    expect(badQuality.message).toContain("not FASTQ: line 4: ' ' at column 3 is not a quality character");
    const fastaInFastq = await failure('@r1\nACGT\n+\nIIII\n>r2\nACGT\n');
    expect(fastaInFastq.details).toMatchObject({ line: 5, record: 1 });
  });

  it('refuses sequence before the first FASTA header', async () => {
    const error = await failure('ACGT\n>r1\nACGT\n');
    expect(error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 1, record: 0 } });
  });

  it('passes on a missing artifact as P-PRECOND-ARTIFACT-NOT-FOUND', async () => {
    const response = await packs.call(TOOL, { sequences: 'art_00000000000000000000000000' });
    expect(response.error?.code).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
  });
});

describe('seq.stats fixtures', () => {
  it('pass through the real host, and their expectations are what seqkit reports', async () => {
    const results = await packs.fixtures(TOOL);
    expect(results.map((r) => r.fixture)).toEqual(
      (await readdir(path.join(PLUGINS, 'seq-stats/fixtures'))).filter((f) => f.endsWith('.json')).sort(),
    );
    expect(results.filter((r) => !r.ok)).toEqual([]);
    for (const name of results.map((r) => r.fixture)) {
      const fixture = JSON.parse(await readFile(path.join(PLUGINS, 'seq-stats/fixtures', name), 'utf8'));
      if (fixture.expect.output === undefined) continue;
      const dataFile = fixture.input.sequences.slice('@data/'.length);
      const data = await readFile(path.join(PLUGINS, 'seq-stats/data', dataFile));
      expect({ name, ...fixture.expect.output }).toEqual({ name, ...(await seqkitStats(dataFile, data)) });
    }
  });
});
