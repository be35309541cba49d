// `npm run bench`: every target of README "Performance" against its baseline, measured in one run as ratios
// (medians of several), printed as a table and written to bench/results.json with the machine.
// `--quick` (BENCH_QUICK=1): tiny sizes and counts, checking only that every row gives a figure;
// `--big` (BENCH_BIG=1): also the 4 GB rows, which take minutes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { callPathRows } from './call-path.js';
import { generateFastq } from '../scripts/fastq-generator.js';
import { fuelRows } from './fuel-overhead.js';
import { measureImport } from './import.js';
import { benchConfig, sizeText, type BenchConfig } from './options.js';
import { requireCommand } from './processes.js';
import { readerRows } from './reader-rows.js';
import { recordedRows } from './recorded-rows.js';
import { failedRow, formatTable, loadAverage, makeRow, thisMachine, writeResults, type Row } from './rows.js';
import { sequenceRows } from './sequence-rows.js';
import { startRows } from './start-rows.js';

const MB = 2 ** 20;

/** The import rows: time against sha256sum (target 1.3x) and peak RSS at two sizes (flat). */
async function importRows(config: BenchConfig, file: string, dir: string): Promise<Row[]> {
  const largeFile = path.join(dir, 'large.fq');
  await generateFastq(largeFile, { bytes: config.largeFastqBytes, seed: 2 });
  try {
    const f = await measureImport({ file, largeFile, runs: config.repeats });
    const small = sizeText(config.fastqBytes);
    return [
      makeRow({
        id: 'import.time',
        name: `helix artifact import of the ${small} FASTQ, process start to exit`,
        unit: 'ms',
        figure: f.importMs,
        baseline: { name: 'sha256sum', figure: f.sha256sumMs },
        target: { of: 'ratio', op: '<=', value: 1.3 },
        samples: f.runs,
      }),
      makeRow({
        id: 'import.rss',
        name: `peak RSS of helix artifact import, ${sizeText(config.largeFastqBytes)} file`,
        unit: 'MiB',
        figure: f.largePeakRssBytes / MB,
        baseline: { name: `${small} file`, figure: f.peakRssBytes / MB },
        target: { of: 'ratio', op: '<=', value: 1.25 },
        samples: f.largeRuns,
      }),
    ];
  } finally {
    rmSync(largeFile, { force: true });
  }
}

/** Runs one section (unless --only leaves it out); a section that throws leaves one failed row in its place. */
async function section(config: BenchConfig, rows: Row[], id: string, name: string, measure: () => Promise<Row[]> | Row[]): Promise<void> {
  if (config.only !== null && !config.only.has(id)) return;
  process.stderr.write(`bench: ${name}...\n`);
  try {
    rows.push(...(await measure()));
  } catch (e) {
    rows.push(failedRow({ id, name, unit: '-' }, e));
  }
}

async function main(): Promise<number> {
  const config = benchConfig(process.argv.slice(2));
  requireCommand('seqkit', 'apt-get install seqkit');
  requireCommand('sha256sum', 'apt-get install coreutils');
  const machine = thisMachine();
  const loadStart = loadAverage();
  const rows: Row[] = [];
  const data = mkdtempSync(path.join(tmpdir(), 'helix-bench-data-'));
  try {
    await section(config, rows, 'call', 'the call path', () => callPathRows(config));
    await section(config, rows, 'recorded', 'the recorded call', () => recordedRows(config));
    await section(config, rows, 'fuel', 'fuel overhead', () => fuelRows(config));
    await section(config, rows, 'start', 'start', () => startRows(config));
    await section(config, rows, 'reader', 'the C and AssemblyScript sequence readers', () => readerRows(config));
    const file = path.join(data, 'reads.fq');
    if (config.only === null || config.only.has('import') || config.only.has('seq'))
      await generateFastq(file, { bytes: config.fastqBytes, seed: 1 });
    await section(config, rows, 'import', 'import', () => importRows(config, file, data));
    const label = sizeText(config.fastqBytes);
    await section(config, rows, 'seq', `sequence tools on ${label}`, () =>
      sequenceRows({ file, label, repeats: config.repeats, idPrefix: '', big: false }),
    );
    rmSync(file, { force: true });
    if (config.bigFastqBytes > 0) {
      const big = path.join(data, 'big.fq');
      const bigLabel = sizeText(config.bigFastqBytes);
      await section(config, rows, 'big', `sequence tools on ${bigLabel}`, async () => {
        await generateFastq(big, { bytes: config.bigFastqBytes, seed: 3 });
        return sequenceRows({ file: big, label: bigLabel, repeats: 1, idPrefix: 'big.', big: true });
      });
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }

  const load = { start: loadStart, end: loadAverage() };
  const lines = [
    `# Helix benchmark, ${config.mode} mode (${machine.date})`,
    '',
    `${machine.cpu}, ${machine.cores} CPUs, ${(machine.memory_bytes / 2 ** 30).toFixed(0)} GiB, Node ${machine.node}; load average ${load.start.join(' ')} at the start, ${load.end.join(' ')} at the end. Each ratio is figure / baseline within this run; figures are medians of the samples in bench/results.json.`,
    '',
    ...formatTable(rows),
  ];
  const notes = rows.filter((r) => r.note !== undefined);
  if (notes.length > 0) lines.push('', ...notes.map((r) => `- ${r.id}: ${r.note}`));
  if (config.mode !== 'big') lines.push('', 'The 4 GiB rows run only with --big (BENCH_BIG=1).');
  process.stdout.write(`${lines.join('\n')}\n`);
  writeResults(config.out, { mode: config.mode, load_average: load, only: config.only === null ? null : [...config.only], machine, rows });
  writeFileSync(`${config.out.replace(/\.json$/, '')}.md`, `${lines.join('\n')}\n`);
  process.stdout.write(`\nwrote ${config.out}\n`);

  const missing = rows.filter((r) => r.figure === null);
  if (missing.length > 0) {
    process.stderr.write(
      `bench: ${missing.length} row(s) gave no figure:\n${missing.map((r) => `  ${r.id}: ${r.error ?? 'no figure'}`).join('\n')}\n`,
    );
    // The quick mode checks that the benchmarks run; a full run reports what failed and goes on.
    if (config.mode === 'quick') return 1;
  }
  return 0;
}

try {
  process.exitCode = await main();
} catch (e) {
  process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
}
