// Real-size data through the real CLI (README "Bundled toolpacks"): generates a FASTQ of any size deterministically
// and streaming, imports it, runs seq.stats, fastq.filter and seq.kmer_count on it with the
// bundled manifests and the embedded default policy, compares every figure with what the
// generator wrote, and deletes everything. test/big-data.test.ts runs it at 4 GiB;
// `npm run bigdata` runs it at 20 GB (HELIX_BIG_DATA_BYTES for another size) and prints the figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../host/1-base/paths.js';
import { generateFastq, type FastqFacts } from './fastq-generator.js';
import { runMeasuredCli } from './measured-cli.js';

const FILTER = { minLength: 120, minMeanQuality: 16 };
const K = 8;

/** One step of the run: its peak memory (scripts/measured-cli.ts), wall time and, for a tool, its output and metrics. */
export interface BigDataStep {
  readonly peakAnonBytes: number;
  readonly peakRssBytes: number;
  readonly wallMs: number;
  readonly output: Record<string, unknown>;
  readonly metrics?: Record<string, number>;
}

/** What a run found. */
export interface BigDataResult {
  readonly facts: FastqFacts;
  readonly generateMs: number;
  readonly steps: Record<'import' | 'seq.stats' | 'fastq.filter' | 'seq.kmer_count', BigDataStep>;
  /** Every figure that differs from the generator's, as `tool field: got X, expected Y`; empty when all match. */
  readonly mismatches: string[];
}

function fail(what: string, run: { code: number | null; stdout: string; stderr: string }): never {
  throw new Error(`${what} failed (exit ${run.code}): ${run.stdout.slice(0, 2000)}${run.stderr.slice(0, 2000)}`);
}

/** Generates `bytes` of FASTQ under a new directory in `parent`, runs the steps, and removes it all, also on failure. */
export async function runBigData(bytes: number, parent: string = tmpdir()): Promise<BigDataResult> {
  const dir = mkdtempSync(path.join(parent, 'helix-big-data-'));
  const file = path.join(dir, 'big.fastq');
  const home = path.join(dir, 'home');
  try {
    const t0 = Date.now();
    const facts = await generateFastq(file, { bytes, filter: FILTER, k: K });
    const generateMs = Date.now() - t0;
    const imported = await runMeasuredCli(['artifact', 'import', file, '--label', 'big', '--home', home], dir);
    if (imported.code !== 0) fail('artifact import', imported);
    const record = JSON.parse(imported.stdout) as { id: string };
    // The store holds its own copy now: the source can go before the calls.
    rmSync(file, { force: true });
    const call = async (tool: string, input: Record<string, unknown>): Promise<BigDataStep> => {
      const r = await runMeasuredCli(['call', tool, '--input', JSON.stringify(input), '--compact', '--home', home], dir);
      const envelope = JSON.parse(r.stdout || '{}') as {
        status?: string;
        output?: Record<string, unknown>;
        metrics?: Record<string, number>;
      };
      if (envelope.status !== 'success') fail(tool, r);
      return {
        peakAnonBytes: r.peakAnonBytes,
        peakRssBytes: r.peakRssBytes,
        wallMs: r.wallMs,
        output: envelope.output!,
        metrics: envelope.metrics!,
      };
    };
    const steps = {
      import: {
        peakAnonBytes: imported.peakAnonBytes,
        peakRssBytes: imported.peakRssBytes,
        wallMs: imported.wallMs,
        output: JSON.parse(imported.stdout) as Record<string, unknown>,
      },
      'seq.stats': await call('seq.stats', { sequences: record.id }),
      'fastq.filter': await call('fastq.filter', {
        reads: record.id,
        min_length: FILTER.minLength,
        min_mean_quality: FILTER.minMeanQuality,
        mean_quality: 'arithmetic',
      }),
      'seq.kmer_count': await call('seq.kmer_count', { fasta: record.id, k: K }),
    };
    return { facts, generateMs, steps, mismatches: mismatches(facts, steps) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function mismatches(facts: FastqFacts, steps: BigDataResult['steps']): string[] {
  const expected: Array<[keyof BigDataResult['steps'], string, unknown]> = [
    ['import', 'size', facts.bytes],
    ['import', 'type', 'fastq'],
    ['seq.stats', 'format', 'FASTQ'],
    ['seq.stats', 'num_seqs', facts.records],
    ['seq.stats', 'sum_len', facts.bases],
    ['seq.stats', 'min_len', facts.minLength],
    ['seq.stats', 'max_len', facts.maxLength],
    ['seq.stats', 'sum_gap', 0],
    ['seq.stats', 'gc_pct', (100 * facts.gc) / facts.bases],
    ['fastq.filter', 'records_in', facts.records],
    ['fastq.filter', 'bases_in', facts.bases],
    ['fastq.filter', 'records_out', facts.keptRecords],
    ['fastq.filter', 'bases_out', facts.keptBases],
    ['seq.kmer_count', 'records', facts.records],
    ['seq.kmer_count', 'bases', facts.bases],
    ['seq.kmer_count', 'other_characters', 0],
    ['seq.kmer_count', 'total_kmers', facts.kmers],
    ['seq.kmer_count', 'distinct_kmers', 4 ** K],
  ];
  // gc_pct has two decimals: the generator's exact figure is compared within the rounding.
  const same = (field: string, got: unknown, want: unknown): boolean =>
    field === 'gc_pct' && typeof got === 'number' && typeof want === 'number' ? Math.abs(got - want) <= 0.005 : got === want;
  return expected
    .filter(([step, field, want]) => !same(field, steps[step].output[field], want))
    .map(([step, field, want]) => `${step} ${field}: got ${JSON.stringify(steps[step].output[field])}, expected ${JSON.stringify(want)}`);
}

const mib = (b: number): string => `${(b / 1024 ** 2).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const bytes = Number(process.env.HELIX_BIG_DATA_BYTES ?? 20e9);
  process.stdout.write(`generating ${mib(bytes)} of FASTQ under ${process.env.HELIX_BIG_DATA_DIR ?? tmpdir()} ...\n`);
  const r = await runBigData(bytes, process.env.HELIX_BIG_DATA_DIR);
  process.stdout.write(`${r.facts.bytes} bytes, ${r.facts.records} reads, ${r.facts.bases} bases; generated in ${r.generateMs} ms\n`);
  process.stdout.write(
    '| step | wall ms | duration_ms | fuel_used | peak anonymous memory | VmHWM (with the mapped store) |\n| --- | --- | --- | --- | --- | --- |\n',
  );
  for (const [name, s] of Object.entries(r.steps)) {
    process.stdout.write(
      `| ${name} | ${s.wallMs} | ${s.metrics?.duration_ms ?? '-'} | ${s.metrics?.fuel_used ?? '-'} | ${mib(s.peakAnonBytes)} | ${mib(s.peakRssBytes)} |\n`,
    );
  }
  process.stdout.write(r.mismatches.length === 0 ? 'every figure matches the generator\n' : `MISMATCHES:\n${r.mismatches.join('\n')}\n`);
  if (r.mismatches.length > 0) process.exitCode = 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.join(packageRoot(), 'dist', 'scripts', 'big-data.js'))
  await main();
