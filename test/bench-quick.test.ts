// The benchmark's quick mode, as CI runs it: `node dist/bench/run.js --quick` in a child process
// must finish, give every row a finite figure and write results.json of the documented shape.
// Speed is never asserted here: only that the benchmarks run. And the FASTQ generator it
// measures with is deterministic and agrees with seqkit on what it wrote.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Results } from '../bench/rows.js';
import { generateFastq, parseSize } from '../scripts/fastq-generator.js';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const work = tempDir('helix-bench-quick-');
afterAll(() => work.cleanup());

/** Every row the quick mode measures (the 4 GB rows run only with --big). */
const QUICK_ROWS = [
  'call.floor',
  'call.helix',
  'call.helix.throughput',
  'call.helix.fresh',
  'extism.back_to_back',
  'extism.throughput',
  'extism.paced',
  'recorded.new_run',
  'recorded.throughput',
  'recorded.replay',
  'recorded.mcp',
  'fuel.overhead',
  'start.replay',
  'start.cold',
  'start.cached',
  'reader.fasta.fuel',
  'reader.fasta.speed',
  'template.fasta.fuel',
  'template.fasta.pages',
  'reader.fastq.fuel',
  'reader.fastq.speed',
  'template.fastq.fuel',
  'template.fastq.pages',
  'import.time',
  'import.rss',
  'seq.stats.tool',
  'seq.stats.call',
  'fastq.filter.tool',
  'fastq.filter.call',
];

function runQuick(out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(packageRoot(), 'dist', 'bench', 'run.js'), '--quick', '--out', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);

describe('npm run bench -- --quick', () => {
  it('runs every row to a finite figure and writes results.json with the machine and each target beside its baseline', async () => {
    const out = path.join(work.dir, 'results.json');
    const run = await runQuick(out);
    expect(
      run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('bench: ')),
      run.stderr,
    ).toEqual([]);
    expect(run.code, run.stderr).toBe(0);
    const results = JSON.parse(readFileSync(out, 'utf8')) as Results;
    expect(results.mode).toBe('quick');
    expect(results.only).toBeNull();
    expect(results.load_average).toEqual({
      start: [expect.any(Number), expect.any(Number), expect.any(Number)],
      end: [expect.any(Number), expect.any(Number), expect.any(Number)],
    });
    expect(results.machine).toEqual({
      cpu: expect.any(String),
      cores: expect.any(Number),
      memory_bytes: expect.any(Number),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(results.rows.map((r) => r.id)).toEqual(QUICK_ROWS);
    for (const row of results.rows) {
      const where = `row ${row.id}`;
      expect(row.error, where).toBeUndefined();
      expect(typeof row.name, where).toBe('string');
      expect(typeof row.unit, where).toBe('string');
      expect(finite(row.figure), where).toBe(true);
      expect(row.samples, where).toBeGreaterThan(0);
      if (row.baseline !== null) {
        expect(typeof row.baseline.name, where).toBe('string');
        expect(finite(row.baseline.figure), where).toBe(true);
        expect(row.ratio, where).toBeCloseTo(row.figure! / row.baseline.figure!, 6);
      } else expect(row.ratio, where).toBeNull();
      if (row.target !== null) {
        expect(['ratio', 'figure'], where).toContain(row.target.of);
        expect(['<=', '>='], where).toContain(row.target.op);
        expect(finite(row.target.value), where).toBe(true);
        expect(typeof row.met, where).toBe('boolean');
      } else expect(row.met, where).toBeNull();
    }
    // The printed table has one line per row, and the same table is written beside the JSON.
    expect(run.stdout).toContain('| row | figure | baseline | ratio | target | met |');
    for (const row of results.rows) expect(run.stdout).toContain(`| ${row.name} |`);
    expect(existsSync(path.join(work.dir, 'results.md'))).toBe(true);
  }, 900_000);
});

describe('generateFastq', () => {
  it('writes the same bytes for the same seed, and the reads, bases and lengths seqkit counts', async () => {
    const a = path.join(work.dir, 'a.fq');
    const b = path.join(work.dir, 'b.fq');
    const figures = await generateFastq(a, { bytes: parseSize('1M'), seed: 7 });
    expect(await generateFastq(b, { bytes: parseSize('1M'), seed: 7 })).toEqual(figures);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    expect(figures.bytes).toBe(readFileSync(a).length);
    expect(figures.bytes).toBeGreaterThanOrEqual(2 ** 20);
    const seqkit = spawnSync('seqkit', ['stats', '-T', '-a', a], { encoding: 'utf8' });
    expect(seqkit.status, seqkit.stderr).toBe(0);
    const [head, values] = seqkit.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    const stat = Object.fromEntries(head!.map((h, i) => [h, values![i]]));
    expect(stat).toMatchObject({
      format: 'FASTQ',
      num_seqs: String(figures.records),
      sum_len: String(figures.bases),
      min_len: String(figures.minLength),
      max_len: String(figures.maxLength),
    });
  });

  it('parseSize reads binary multiples and refuses other text with an example', () => {
    expect(parseSize('200M')).toBe(200 * 2 ** 20);
    expect(parseSize('4G')).toBe(4 * 2 ** 30);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(parseSize('1000')).toBe(1000);
    expect(() => parseSize('4 gigabytes')).toThrow('not a size: "4 gigabytes" (write e.g. 200M, 4G, 512K)');
  });
});
