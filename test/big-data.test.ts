// The 4 GB test (issue 13): a FASTQ of 4 GiB, generated deterministically and streamed to disk,
// goes through the real CLI (import, seq.stats, fastq.filter, seq.kmer_count) under the bundled
// manifests and the embedded default policy; the results must be what the generator wrote, each
// process's peak memory must stay far below the file, and everything is deleted afterwards.
// HELIX_BIG_DATA_BYTES sets another size (scripts/big-data.ts runs 20 GB the same way).
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateFastq } from '../scripts/fastq-generator.js';
import { CLI } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

const BYTES = Number(process.env.HELIX_BIG_DATA_BYTES ?? 4 * 1024 ** 3);
const FILTER = { minLength: 120, minMeanQuality: 16 };
const K = 8;
// Far below the 4 GiB file: a process that held a third of it would fail.
const RSS_BOUND = 1536 * 1024 ** 2;
const work = tempDir('helix-big-data-', tmpdir());

afterAll(() => work.cleanup());

/** How one CLI process ended, with its peak resident memory (VmHWM, read while it ran). */
interface Measured {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly peakRssBytes: number;
}

function vmHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0;
  }
}

/** Runs `helix ...args` in the work directory (the default policy's import root is $PWD). */
function helix(args: readonly string[]): Promise<Measured> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args, '--home', path.join(work.dir, 'home')], { cwd: work.dir, env: { ...process.env, PWD: work.dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, vmHwm(child.pid!))), 200);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('exit', () => (peak = Math.max(peak, vmHwm(child.pid!))));
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakRssBytes: peak });
    });
  });
}

async function callTool(tool: string, input: Record<string, unknown>): Promise<{ output: Record<string, unknown>; metrics: Record<string, number>; peakRssBytes: number }> {
  const r = await helix(['call', tool, '--input', JSON.stringify(input), '--compact']);
  const envelope = JSON.parse(r.stdout || '{}') as { status?: string; output?: Record<string, unknown>; metrics?: Record<string, number>; error?: unknown };
  expect(envelope.status, `${tool}: ${JSON.stringify(envelope.error ?? r.stderr)}`).toBe('success');
  return { output: envelope.output!, metrics: envelope.metrics!, peakRssBytes: r.peakRssBytes };
}

const mb = (bytes: number): string => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;

describe(`a ${(BYTES / 1024 ** 3).toFixed(1)} GiB FASTQ with the bundled defaults`, () => {
  it('imports it and gives the generator’s figures from seq.stats, fastq.filter and seq.kmer_count, in flat memory', async () => {
    const file = path.join(work.dir, 'big.fastq');
    try {
      const facts = await generateFastq(file, { bytes: BYTES, filter: FILTER, k: K });
      const imported = await helix(['artifact', 'import', file, '--label', 'big']);
      expect(imported.code, imported.stderr).toBe(0);
      const record = JSON.parse(imported.stdout) as { id: string; size: number; type: string };
      expect(record).toMatchObject({ size: facts.bytes, type: 'fastq' });
      // The store holds its own copy now: the source file can go before the calls.
      rmSync(file, { force: true });

      const stats = await callTool('seq.stats', { sequences: record.id });
      expect(stats.output).toMatchObject({ format: 'FASTQ', num_seqs: facts.records, sum_len: facts.bases, min_len: facts.minLength, max_len: facts.maxLength, sum_gap: 0 });
      expect(stats.output.gc_pct).toBeCloseTo((100 * facts.gc) / facts.bases, 2);

      const filtered = await callTool('fastq.filter', { reads: record.id, min_length: FILTER.minLength, min_mean_quality: FILTER.minMeanQuality, mean_quality: 'arithmetic' });
      expect(filtered.output).toMatchObject({ records_in: facts.records, bases_in: facts.bases, records_out: facts.keptRecords, bases_out: facts.keptBases });

      const kmers = await callTool('seq.kmer_count', { fasta: record.id, k: K });
      expect(kmers.output).toMatchObject({ k: K, records: facts.records, bases: facts.bases, other_characters: 0, total_kmers: facts.kmers, distinct_kmers: 4 ** K });

      const peaks = { import: imported.peakRssBytes, 'seq.stats': stats.peakRssBytes, 'fastq.filter': filtered.peakRssBytes, 'seq.kmer_count': kmers.peakRssBytes };
      process.stdout.write(
        `big data: ${mb(facts.bytes)}, ${facts.records} reads; peak RSS ${Object.entries(peaks).map(([k, v]) => `${k} ${mb(v)}`).join(', ')}; ` +
          `fuel seq.stats ${stats.metrics.fuel_used}, fastq.filter ${filtered.metrics.fuel_used}, seq.kmer_count ${kmers.metrics.fuel_used}; ` +
          `duration_ms ${stats.metrics.duration_ms}, ${filtered.metrics.duration_ms}, ${kmers.metrics.duration_ms}\n`,
      );
      for (const [what, peak] of Object.entries(peaks)) {
        expect(peak, what).toBeGreaterThan(0);
        expect(peak, what).toBeLessThan(RSS_BOUND);
      }
    } finally {
      rmSync(file, { force: true });
      rmSync(path.join(work.dir, 'home'), { recursive: true, force: true });
    }
  }, 4 * 3600_000);
});
