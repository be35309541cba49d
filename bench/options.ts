// The benchmark's options: the mode (quick, full, big) from the command line or the environment,
// and the sizes and call counts each mode measures with.
import path from 'node:path';
import { packageRoot } from '../host/1-base/paths.js';
import { parseSize } from '../scripts/fastq-generator.js';

/** Resolved options of one benchmark run. */
export interface BenchConfig {
  readonly mode: 'quick' | 'full' | 'big';
  /** Where results.json is written. */
  readonly out: string;
  /** The sections to run (all when null): call, recorded, fuel, start, reader, import, seq, big. */
  readonly only: ReadonlySet<string> | null;
  /** The FASTQ of the sequence rows, and the larger one import's peak RSS is compared at. */
  readonly fastqBytes: number;
  readonly largeFastqBytes: number;
  /** The FASTQ of the --big rows (0 when they do not run). */
  readonly bigFastqBytes: number;
  /** Repetitions of each process-level measurement (the median is reported). */
  readonly repeats: number;
  /** Runs of the replayed CLI call and of `--help`. */
  readonly startRepeats: number;
  /** Code bytes of the cold-start module. */
  readonly coldModuleBytes: number;
  readonly calls: {
    readonly latency: number;
    readonly throughput: number;
    readonly extismLatency: number;
    readonly extismThroughput: number;
    readonly extismPaced: number;
    readonly recorded: number;
    readonly recordedThroughput: number;
  };
  readonly computeRounds: number;
}

/** The sections of a run, in the order they run. */
export const SECTIONS = ['call', 'recorded', 'fuel', 'start', 'reader', 'import', 'seq', 'big'] as const;

const USAGE = `usage: npm run bench [-- --quick | --big] [--only SECTION,...] [--out FILE]   (or BENCH_QUICK=1, BENCH_BIG=1, BENCH_ONLY=..., BENCH_OUT=FILE)
sections: ${SECTIONS.join(', ')}`;

function envNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${text} is not a positive number`);
  return n;
}

function envSize(name: string, fallback: number): number {
  const text = process.env[name];
  return text === undefined || text === '' ? fallback : parseSize(text);
}

/** A mode's call counts, each overridden by its BENCH_*_CALLS variable. */
function callCounts(d: BenchConfig['calls']): BenchConfig['calls'] {
  return {
    latency: envNumber('BENCH_LATENCY_CALLS', d.latency),
    throughput: envNumber('BENCH_THROUGHPUT_CALLS', d.throughput),
    extismLatency: envNumber('BENCH_EXTISM_LATENCY_CALLS', d.extismLatency),
    extismThroughput: envNumber('BENCH_EXTISM_THROUGHPUT_CALLS', d.extismThroughput),
    extismPaced: envNumber('BENCH_EXTISM_PACED_CALLS', d.extismPaced),
    recorded: envNumber('BENCH_RECORDED_CALLS', d.recorded),
    recordedThroughput: envNumber('BENCH_RECORDED_THROUGHPUT_CALLS', d.recordedThroughput),
  };
}

/** Reads the mode from `argv` (`--quick`, `--big`, `--out FILE`) and BENCH_* variables. */
export function benchConfig(argv: readonly string[]): BenchConfig {
  let quick = process.env.BENCH_QUICK === '1';
  let big = process.env.BENCH_BIG === '1';
  let out = process.env.BENCH_OUT;
  let only = process.env.BENCH_ONLY;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') quick = true;
    else if (a === '--big') big = true;
    else if (a === '--out' && argv[i + 1] !== undefined) out = argv[++i];
    else if (a === '--only' && argv[i + 1] !== undefined) only = argv[++i];
    else throw new Error(`unknown argument ${a}\n${USAGE}`);
  }
  const sections = only === undefined || only === '' ? null : new Set(only.split(',').map((x) => x.trim()));
  for (const x of sections ?? [])
    if (!(SECTIONS as readonly string[]).includes(x)) throw new Error(`--only: no section ${JSON.stringify(x)}\n${USAGE}`);
  // Asking for the 4 GB rows by name is asking for the big mode.
  if (sections?.has('big') === true) big = true;
  if (quick && big) throw new Error(`--quick and --big exclude each other: the quick mode never runs the 4 GB rows\n${USAGE}`);
  const mode = quick ? 'quick' : big ? 'big' : 'full';
  // The quick mode writes beside, never over, the results of a full run.
  const resultsFile = path.resolve(out ?? path.join(packageRoot(), 'bench', quick ? 'results-quick.json' : 'results.json'));
  if (quick) {
    return {
      mode,
      out: resultsFile,
      only: sections,
      fastqBytes: envSize('BENCH_FASTQ_SIZE', 2 * 2 ** 20),
      largeFastqBytes: envSize('BENCH_LARGE_FASTQ_SIZE', 10 * 2 ** 20),
      bigFastqBytes: 0,
      repeats: envNumber('BENCH_REPEATS', 1),
      startRepeats: envNumber('BENCH_START_REPEATS', 2),
      coldModuleBytes: envSize('BENCH_COLD_MODULE_SIZE', 2 ** 18),
      calls: callCounts({
        latency: 100,
        throughput: 400,
        extismLatency: 5,
        extismThroughput: 20,
        extismPaced: 3,
        recorded: 50,
        recordedThroughput: 200,
      }),
      computeRounds: envNumber('BENCH_COMPUTE_ROUNDS', 3000),
    };
  }
  return {
    mode,
    out: resultsFile,
    only: sections,
    fastqBytes: envSize('BENCH_FASTQ_SIZE', 200 * 2 ** 20),
    largeFastqBytes: envSize('BENCH_LARGE_FASTQ_SIZE', 2 ** 30),
    bigFastqBytes: big ? envSize('BENCH_BIG_FASTQ_SIZE', 4 * 2 ** 30) : 0,
    repeats: envNumber('BENCH_REPEATS', 5),
    startRepeats: envNumber('BENCH_START_REPEATS', 20),
    coldModuleBytes: envSize('BENCH_COLD_MODULE_SIZE', 2 ** 20),
    calls: callCounts({
      latency: 3000,
      throughput: 20000,
      extismLatency: 200,
      extismThroughput: 1000,
      extismPaced: 50,
      recorded: 1000,
      recordedThroughput: 5000,
    }),
    computeRounds: envNumber('BENCH_COMPUTE_ROUNDS', 300000),
  };
}

/** A size in words: 200 MiB, 4 GiB. */
export function sizeText(bytes: number): string {
  if (bytes >= 2 ** 30 && bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30} GiB`;
  if (bytes >= 2 ** 20) return `${Math.round(bytes / 2 ** 20)} MiB`;
  return `${Math.round(bytes / 2 ** 10)} KiB`;
}
