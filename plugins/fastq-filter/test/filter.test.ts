// fastq.filter through the real host (built from source, artifacts in a temporary LMDB store):
// the kept reads byte for byte against `seqkit seq -m LEN -Q QUAL` (seqkit 2.3.0, whose -Q is
// the error-probability mean) and against a JS reference for fastp's arithmetic mean; gzip,
// CR LF, an input larger than the memory ceiling, the longest read, fixtures and errors.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireError } from '../../../abi/index.js';
import { hostStore } from '../../../host/5-host/host.js';
import { startPackHost, type PackHost } from '../../../test/helpers/pack-host.js';
import { fastqLargerThan, PLUGINS, randomFastq, runReference, scratchDir } from '../../seq-stats/test/sequences.js';

const TOOL = 'fastq.filter';
const PACK = path.join(PLUGINS, 'fastq-filter');
let packs: PackHost;
const scratch = scratchDir();

beforeAll(async () => {
  packs = await startPackHost(['fastq-filter']);
}, 180_000);

afterAll(async () => {
  await packs?.close();
  scratch.cleanup();
});

// ---- the JS reference -------------------------------------------------------------------

interface Read {
  readonly header: string;
  readonly sequence: string;
  readonly quality: string;
}

/** The records of 4-line FASTQ text (blank lines between records skipped, CR LF or LF). */
function parseFastq(text: string): Read[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const reads: Read[] = [];
  for (let i = 0; i < lines.length; ) {
    if (lines[i] === '') {
      i++;
      continue;
    }
    reads.push({ header: lines[i]!.slice(1), sequence: lines[i + 1]!, quality: lines[i + 3]! });
    i += 4;
  }
  return reads;
}

/** seqkit 2.x's mean quality: -10 log10 of the mean error probability. */
function errorProbabilityMean(quality: string): number {
  if (quality.length === 0) return 0;
  let sum = 0;
  for (const c of quality) sum += 10 ** ((c.charCodeAt(0) - 33) / -10);
  return -10 * Math.log10(sum / quality.length);
}

/** fastp's mean quality: the arithmetic mean of the phred values. */
function arithmeticMean(quality: string): number {
  if (quality.length === 0) return 0;
  let sum = 0;
  for (const c of quality) sum += c.charCodeAt(0) - 33;
  return sum / quality.length;
}

function serialise(reads: readonly Read[]): string {
  return reads.map((r) => `@${r.header}\n${r.sequence}\n+\n${r.quality}\n`).join('');
}

// ---- calling the tool -------------------------------------------------------------------

/** fastq.filter's output (schemas/output.json). */
interface FilterOutput {
  filtered: string;
  records_in: number;
  records_out: number;
  bases_in: number;
  bases_out: number;
}

async function filter(
  data: string | Uint8Array,
  options: Record<string, unknown>,
): Promise<{ output: FilterOutput; fastq: string; fuel: number; pages: number }> {
  const response = await packs.call(TOOL, { reads: await packs.put(data), ...options });
  if (response.status !== 'success') throw new Error(`expected success, got ${JSON.stringify(response.error)}`);
  const output = response.output as FilterOutput;
  return {
    output,
    fastq: (await packs.bytes(output.filtered)).toString('utf8'),
    fuel: response.metrics.fuel_used,
    pages: response.metrics.memory_peak_pages,
  };
}

async function failure(data: string | Uint8Array, options: Record<string, unknown> = {}): Promise<WireError | undefined> {
  const response = await packs.call(TOOL, { reads: await packs.put(data), ...options });
  // The host classes I-REQ-* codes as invalid requests, every other tool error as terminal.
  expect(response.status).toBe(response.error?.code.startsWith('I-REQ-') ? 'invalid_request' : 'terminal_error');
  return response.error;
}

/** `seqkit seq` with `args` on `data`, stdout as text. */
async function seqkitSeq(name: string, data: string | Uint8Array, args: string[]): Promise<string> {
  return runReference('seqkit', ['seq', ...args, scratch.file(name, data)]);
}

/** The smallest distance between any read's mean and `threshold`: comparisons this close would test rounding, not the filter. */
function margin(reads: readonly Read[], threshold: number, mean: (q: string) => number): number {
  return Math.min(...reads.filter((r) => r.quality.length > 0).map((r) => Math.abs(mean(r.quality) - threshold)));
}

// ---- tests ------------------------------------------------------------------------------

describe('fastq.filter against seqkit seq', () => {
  it('keeps exactly the reads `seqkit seq -m` keeps (length only), LF and CR LF', async () => {
    for (let seed = 1; seed <= 4; seed++) {
      const text = randomFastq(200 + seed, { records: 80, maxLength: 120, crlf: seed % 2 === 0 });
      for (const minLength of [0, 1, 50, 119, 500]) {
        const { output, fastq } = await filter(text, { min_length: minLength });
        const expected = await seqkitSeq(`len-${seed}-${minLength}.fq`, text, ['-m', String(minLength)]);
        expect({ seed, minLength, fastq }).toEqual({ seed, minLength, fastq: expected });
        const reads = parseFastq(text);
        const kept = reads.filter((r) => r.sequence.length >= minLength);
        expect(output).toMatchObject({
          records_in: reads.length,
          records_out: kept.length,
          bases_in: reads.reduce((n, r) => n + r.sequence.length, 0),
          bases_out: kept.reduce((n, r) => n + r.sequence.length, 0),
        });
      }
    }
  });

  it('keeps exactly the reads `seqkit seq -m -Q` keeps (error-probability mean quality), plain and gzip', async () => {
    for (let seed = 1; seed <= 4; seed++) {
      // No empty reads here: seqkit 2.3.0 judges an empty read by the previous read's
      // qualities (a reused buffer), so it cannot be the reference for them; see the next test.
      const text = randomFastq(300 + seed, { records: 100, minLength: 1, maxLength: 150, crlf: seed === 3 });
      const reads = parseFastq(text);
      for (const [minLength, minQuality] of [
        [0, 10.5],
        [30, 20.25],
        [0, 27.7],
        [80, 5.1],
      ] as const) {
        expect(margin(reads, minQuality, errorProbabilityMean)).toBeGreaterThan(1e-6);
        const data = seed % 2 === 0 ? gzipSync(text) : text;
        const { output, fastq } = await filter(data, { min_length: minLength, min_mean_quality: minQuality });
        const expected = await seqkitSeq(`q-${seed}-${minQuality}.fq${seed % 2 === 0 ? '.gz' : ''}`, data, [
          '-m',
          String(minLength),
          '-Q',
          String(minQuality),
        ]);
        expect({ seed, minQuality, fastq }).toEqual({ seed, minQuality, fastq: expected });
        // Both filters matter on this data: some reads go, some stay.
        expect(output.records_out).toBeGreaterThan(0);
        expect(output.records_out).toBeLessThan(output.records_in);
      }
    }
  });

  it('gives an empty read mean quality 0: dropped by any positive threshold, kept without one', async () => {
    const text = '@full\nACGT\n+\nIIII\n@empty\n\n+\n\n@low\nAC\n+\n##\n';
    for (const mean_quality of ['error_probability', 'arithmetic']) {
      expect((await filter(text, { min_mean_quality: 30, mean_quality })).fastq).toBe('@full\nACGT\n+\nIIII\n');
      expect((await filter(text, { min_mean_quality: 0, mean_quality })).output.records_out).toBe(3);
    }
  });

  it('keeps the reads whose arithmetic mean quality (fastp) reaches the threshold, ties included', async () => {
    const text = randomFastq(400, { records: 150, maxLength: 100 });
    const reads = parseFastq(text);
    for (const minQuality of [12, 20, 20.5, 33]) {
      const { output, fastq } = await filter(text, { min_mean_quality: minQuality, mean_quality: 'arithmetic' });
      const kept = reads.filter((r) => arithmeticMean(r.quality) >= minQuality);
      expect({ minQuality, fastq }).toEqual({ minQuality, fastq: serialise(kept) });
      expect(output.records_out).toBe(kept.length);
    }
    // A read whose mean is exactly the threshold is kept; the error-probability mean of the same read is lower.
    const tie = '@t\nACGT\n+\n+5+5\n';
    expect(arithmeticMean('+5+5')).toBe(15);
    expect((await filter(tie, { min_mean_quality: 15, mean_quality: 'arithmetic' })).output.records_out).toBe(1);
    expect((await filter(tie, { min_mean_quality: 15 })).output.records_out).toBe(0);
  });

  it('writes every read unchanged when no filter is given, with LF line ends and bare + lines, as seqkit seq does', async () => {
    const text = '@r1 lane=1\r\nACGT\r\n+r1\r\nIIII\r\n\r\n@r2\r\n\r\n+\r\n\r\n@r3\r\nnnA\r\n+\r\n!!!';
    const { output, fastq } = await filter(text, {});
    expect(fastq).toBe(await seqkitSeq('all.fq', text, []));
    expect(fastq).toBe('@r1 lane=1\nACGT\n+\nIIII\n@r2\n\n+\n\n@r3\nnnA\n+\n!!!\n');
    expect(output).toMatchObject({ records_in: 3, records_out: 3, bases_in: 7, bases_out: 7 });
  });

  it('writes a fastq artifact under its declared role, labelled, and an empty one for an empty input', async () => {
    const id = await packs.put('@a\nAC\n+\nII\n', 'run 7 reads');
    const response = await packs.call(TOOL, { reads: id, min_length: 1 });
    const output = response.output as FilterOutput;
    const record = (await import('../../../host/4-calls/artifacts/index.js')).getArtifact(hostStore(packs.host), output.filtered);
    expect(record).toMatchObject({ type: 'fastq', label: 'filtered run 7 reads' });
    const labelled = (await packs.call(TOOL, { reads: id, label: 'mine' })).output as FilterOutput;
    expect((await import('../../../host/4-calls/artifacts/index.js')).getArtifact(hostStore(packs.host), labelled.filtered).label).toBe(
      'mine',
    );
    const empty = await filter('', { min_length: 10 });
    expect({ fastq: empty.fastq, ...empty.output, filtered: undefined }).toEqual({
      fastq: '',
      filtered: undefined,
      records_in: 0,
      records_out: 0,
      bases_in: 0,
      bases_out: 0,
    });
  });

  it('streams a gzip FASTQ larger than its memory ceiling in bounded memory, within its fuel budget', async () => {
    const tool = packs.tool(TOOL);
    const ceiling = tool.limits.maxMemoryPages * 65536;
    const text = fastqLargerThan(ceiling * 1.1, 5000, 50, 150);
    expect(text.length).toBeGreaterThan(ceiling);
    const gz = gzipSync(text);
    const { output, fastq, fuel, pages } = await filter(gz, { min_length: 100, min_mean_quality: 20.5 });
    expect(fastq).toBe(await seqkitSeq('big.fq.gz', gz, ['-m', '100', '-Q', '20.5']));
    expect(output.records_out).toBeGreaterThan(0);
    expect(pages).toBeLessThanOrEqual(tool.limits.maxMemoryPages);
    const perByte = fuel / text.length;
    expect(perByte * 100e6).toBeLessThan(tool.limits.fuel);
    console.log(`fastq.filter: ${text.length} bytes of FASTQ, ${fuel} fuel (${perByte.toFixed(2)} per byte), peak ${pages} pages`);
  }, 240_000);

  it('holds a read of 4 Mi bases within its memory cap, and refuses a longer one with I-REQ-TOO-LARGE', async () => {
    const max = 4 * 1024 * 1024;
    const tool = packs.tool(TOOL);
    const long = `@long\n${'ACGT'.repeat(max / 4)}\n+\n${'I'.repeat(max)}\n`;
    const { output, pages } = await filter(long, { min_mean_quality: 30 });
    expect(output).toMatchObject({ records_out: 1, bases_out: max });
    expect(pages).toBeLessThanOrEqual(tool.limits.maxMemoryPages);
    console.log(`fastq.filter: one read of ${max} bases, peak ${pages} pages`);
    const error = await failure(`@short\nA\n+\nI\n@huge\n${'A'.repeat(max + 1)}\n+\n${'I'.repeat(max + 1)}\n`);
    expect(error).toMatchObject({ code: 'I-REQ-TOO-LARGE', details: { record: 2, line: 5, max_bytes: max } });
  }, 120_000);
});

describe('fastq.filter errors', () => {
  it('refuses FASTA with D-DATA-FORMAT: it has no qualities', async () => {
    const error = await failure('>r1\nACGT\n');
    expect(error).toMatchObject({ code: 'D-DATA-FORMAT', details: { format: 'FASTA' } });
    expect(error?.message).toContain('is FASTA; fastq.filter needs qualities');
  });

  it('refuses broken FASTQ with D-DATA-FORMAT naming the line', async () => {
    const error = await failure('@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIIIII\n');
    expect(error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 8, record: 2, sequence_length: 4 } });
    const table = await failure('sample\tcount\n');
    expect(table).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 1, record: 0 } });
  });

  it('refuses inputs the schema does not allow before the tool runs', async () => {
    const id = await packs.put('@a\nAC\n+\nII\n');
    for (const input of [
      { reads: id, min_length: -1 },
      { reads: id, min_mean_quality: 94 },
      { reads: id, mean_quality: 'median' },
      { reads: id, extra: 1 },
    ]) {
      const response = await packs.call(TOOL, input);
      expect({ input, code: response.error?.code }).toEqual({ input, code: 'I-REQ-INPUT' });
    }
  });
});

describe('fastq.filter fixtures', () => {
  it('pass through the real host, and their expected files are what seqkit writes', async () => {
    const results = await packs.fixtures(TOOL);
    expect(results.map((r) => r.fixture)).toEqual((await readdir(path.join(PACK, 'fixtures'))).filter((f) => f.endsWith('.json')).sort());
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const reads = await readFile(path.join(PACK, 'data/reads.fq'));
    expect(await readFile(path.join(PACK, 'data/reads.min20-q20.fq'), 'utf8')).toBe(
      await seqkitSeq('fixture.fq', reads, ['-m', '20', '-Q', '20']),
    );
    expect(gunzipSync(await readFile(path.join(PACK, 'data/reads.fq.gz'))).equals(reads)).toBe(true);
  });
});
