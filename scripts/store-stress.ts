// The store under concurrent processes (ABI-STORE-001..004): trials of many `helix` processes at
// once on one fresh store (imports of files of different sizes, calls, listings), each process's
// exit counted, then the store walked record by record and blob by blob. CI runs it small
// (test/store-concurrency.test.ts); `node dist/scripts/store-stress.js --trials 50` runs it long.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../host/1-base/paths.js';
import { readArtifactRecord } from '../host/3-store/artifact-records.js';
import { blobRecord, readBlob } from '../host/3-store/blobs.js';
import { checkStoreHeader } from '../host/3-store/header.js';
import { openStore, STORE_DATABASES, type StoreDatabaseName } from '../host/3-store/open-store.js';
import { readRange } from '../host/3-store/records.js';
import { readRun } from '../host/3-store/runs.js';

/** How a stress run is shaped. */
export interface StressOptions {
  readonly trials: number;
  /** Processes started at once per trial. */
  readonly processes: number;
  /** Sizes of the imported files, MiB; imports cycle through them. */
  readonly sizesMiB: readonly number[];
  /** A process still running after this long counts as hung and is killed. */
  readonly timeoutMs: number;
  /** Where trials run; default a new temporary directory, removed afterwards unless a trial failed. */
  readonly dir?: string;
  /** The CLI the processes run; default this package's built one (another build, to compare). */
  readonly cli?: string;
  readonly log?: (line: string) => void;
}

/** One process of a trial and how it ended. */
export interface ProcessOutcome {
  readonly work: string;
  readonly code: number | null;
  readonly signal: string | null;
  readonly hung: boolean;
  readonly ms: number;
  /** The last 4,000 characters of each stream. */
  readonly stdout: string;
  readonly stderr: string;
  /** The native backtrace of every thread, from the core file a crashed process left (gdb, when installed). */
  readonly backtrace?: string;
}

/** What the stress run saw. */
export interface StressReport {
  readonly trials: number;
  readonly processes: number;
  /** Processes by how they ended: `exit 0`, `R-CAP-STORE-CONFLICT` (clean and retryable), `exit 1`, `SIGSEGV`, `hung`, ... */
  readonly outcomes: Record<string, number>;
  /** Trials in which some process neither exited 0 nor ended with the clean conflict. */
  readonly failedTrials: number;
  /** Problems the walk of each store found, with their trial. */
  readonly storeProblems: string[];
  /** Artifacts and runs the processes reported, each looked up in the store after its trial. */
  readonly reported: { artifacts: number; runs: number };
  /** The first few processes that neither exited 0 nor ended with the clean conflict. */
  readonly failures: Array<ProcessOutcome & { trial: number }>;
  /** Core files left in the processes' working directories (when `ulimit -c` allows them). */
  readonly coreFiles: number;
  /** Processes that exited 0 although LMDB reported a failed transaction (the store tried it again, ABI-STORE-005). */
  readonly recovered: number;
  readonly seconds: number;
}

const builtCli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
const gcPlugins = path.join(packageRoot(), 'plugins', 'seq-gc-content');

/** A process that ended with the clean, retryable error of ABI-STORE-005: nothing of its write stored. */
export const CLEAN_CONFLICT = 'R-CAP-STORE-CONFLICT';

/** How a process ended: `exit 0`, the clean conflict, `exit N`, a signal, or `hung`. */
function outcomeOf(o: ProcessOutcome): string {
  if (o.hung) return 'hung';
  if (o.signal !== null) return o.signal;
  // The CLI says it on stderr; `helix call` answers with its envelope on stdout.
  if (o.code !== 0 && (o.stderr.includes(`helix: ${CLEAN_CONFLICT}:`) || o.stdout.includes(`"code":"${CLEAN_CONFLICT}"`)))
    return CLEAN_CONFLICT;
  return `exit ${o.code}`;
}

/**
 * Runs one `helix` process to its end, or kills it at the timeout. The shell raises the core
 * size limit where it may and then becomes the process (exec), so a crash leaves a core file in
 * `cwd` (with the usual core_pattern) and the signal is the process's own.
 */
function helix(cli: string, args: readonly string[], cwd: string, timeoutMs: number, work: string): Promise<ProcessOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'ulimit -c unlimited 2>/dev/null; exec "$0" "$@"', process.execPath, cli, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout = (stdout + c.toString('utf8')).slice(-4000)));
    let hung = false;
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ work, code, signal, hung, ms: Date.now() - started, stdout, stderr });
    });
  });
}

/** The work of process `i` of `n`: imports of each size, calls (some the same, to join or replay), listings. */
function workOf(i: number, files: readonly string[], home: string, policy: string): { work: string; args: string[] } {
  const kind = i % 4;
  if (kind === 0 || kind === 1) {
    const file = files[Math.floor(i / 2) % files.length]!;
    return { work: `import ${path.basename(file)}`, args: ['artifact', 'import', file, '--home', home, '--policy', policy] };
  }
  if (kind === 2) {
    const sequence = 'ACGT'.repeat(1 + (i % 3));
    return {
      work: `call ${sequence}`,
      args: ['call', 'seq.gc_content', '--toolpacks', gcPlugins, '--home', home, '--input', JSON.stringify({ sequence })],
    };
  }
  return i % 8 === 3
    ? { work: 'runs list', args: ['runs', 'list', '--home', home] }
    : { work: 'artifact list', args: ['artifact', 'list', '--home', home] };
}

/** What the processes of a trial said they stored: artifact ids from imports, run ids from calls. */
export interface Reported {
  readonly artifacts: readonly string[];
  readonly runs: readonly string[];
}

/** The ids a process that exited 0 reported on stdout. */
function reportedBy(o: ProcessOutcome): Reported {
  if (o.code !== 0) return { artifacts: [], runs: [] };
  const artifact = /^\s*"id": "(art_[0-9A-Z]+)"/m.exec(o.stdout)?.[1];
  const run = /"run_id": "(run_[0-9a-f]{32})"/.exec(o.stdout)?.[1];
  return { artifacts: artifact === undefined ? [] : [artifact], runs: run === undefined ? [] : [run] };
}

/** Whether a record is there: a damaged one is, and the walk over every database has named it. */
function present(read: () => unknown): boolean {
  try {
    return read() !== undefined;
  } catch {
    return true;
  }
}

/**
 * Walks a store: the header, every record of every database, every blob's bytes, and every
 * artifact and run the processes reported (a commit written over by another is lost, ABI-STORE-007).
 */
export async function walkStore(home: string, reported: Reported = { artifacts: [], runs: [] }): Promise<string[]> {
  const problems: string[] = [];
  try {
    checkStoreHeader(path.join(home, 'helix.mdb'));
  } catch (err) {
    return [(err as Error).message];
  }
  const store = openStore(home);
  try {
    for (const db of Object.keys(STORE_DATABASES) as StoreDatabaseName[]) {
      try {
        for (const _ of readRange(store, db)) void _;
      } catch (err) {
        problems.push(`${db}: ${(err as Error).message}`);
      }
    }
    for (const { key } of readRange(store, 'blobs')) {
      try {
        for await (const _ of readBlob(store, key)) void _;
      } catch (err) {
        problems.push(`blob ${key}: ${(err as Error).message}`);
      }
    }
    for (const { value: a } of readRange(store, 'artifacts'))
      if (!present(() => blobRecord(store, a.sha256))) problems.push(`artifact ${a.id}: its blob is missing`);
    for (const id of reported.artifacts)
      if (!present(() => readArtifactRecord(store, id))) problems.push(`artifact ${id}, which an import reported, is missing`);
    for (const id of reported.runs) if (!present(() => readRun(store, id))) problems.push(`run ${id}, which a call reported, is missing`);
  } finally {
    await store.close();
  }
  return problems;
}

/** Every thread's backtrace from `core` of a node process, or undefined without gdb. */
function backtraceOf(core: string): string | undefined {
  const gdb = spawnSync('gdb', ['-batch', '-ex', 'bt 40', '-ex', 'thread apply all bt 25', process.execPath, core], {
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 1 << 24,
  });
  if (gdb.error !== undefined || gdb.status !== 0) return undefined;
  return gdb.stdout
    .split('\n')
    .filter((line) => !line.startsWith('[New LWP'))
    .join('\n')
    .slice(0, 12_000);
}

async function writeRandomFile(file: string, mib: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < mib; i++) if (!out.write(randomBytes(1 << 20))) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

/** Runs the trials and reports what happened. */
export async function runStress(options: StressOptions): Promise<StressReport> {
  const log = options.log ?? (() => undefined);
  const root = options.dir ?? mkdtempSync(path.join(tmpdir(), 'helix-stress-'));
  const started = Date.now();
  const filesDir = path.join(root, 'files');
  mkdirSync(filesDir, { recursive: true });
  const files: string[] = [];
  for (const mib of options.sizesMiB) {
    const file = path.join(filesDir, `random-${mib}MiB.bin`);
    if (!existsSync(file)) await writeRandomFile(file, mib);
    files.push(file);
  }
  const policy = path.join(root, 'policy.yaml');
  writeFileSync(policy, `version: 1\ntools: { allow: ["*"] }\npaths: { importRoots: ["${filesDir}"], exportRoots: ["${root}"] }\n`);
  const outcomes: Record<string, number> = {};
  const failures: Array<ProcessOutcome & { trial: number }> = [];
  const storeProblems: string[] = [];
  let failedTrials = 0;
  let coreFiles = 0;
  let recovered = 0;
  const reportedCount = { artifacts: 0, runs: 0 };
  for (let trial = 1; trial <= options.trials; trial++) {
    const home = path.join(root, `trial-${trial}`);
    const cwds = Array.from({ length: options.processes }, (_, i) => path.join(home, 'cwd', String(i)));
    for (const d of cwds) mkdirSync(d, { recursive: true });
    const ended = await Promise.all(
      cwds.map((cwd, i) => {
        const { work, args } = workOf(i, files, home, policy);
        return helix(options.cli ?? builtCli, args, cwd, options.timeoutMs, work);
      }),
    );
    let failed = false;
    for (const [i, o] of ended.entries()) {
      const key = outcomeOf(o);
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      if (key === 'exit 0' && /mdb_\w+ error/.test(o.stderr)) recovered += 1;
      if (key !== 'exit 0' && key !== CLEAN_CONFLICT) {
        failed = true;
        const core = readdirSync(cwds[i]!).find((f) => f.startsWith('core'));
        const backtrace = core === undefined ? undefined : backtraceOf(path.join(cwds[i]!, core));
        if (failures.length < 10) failures.push({ ...o, trial, ...(backtrace === undefined ? {} : { backtrace }) });
      }
    }
    const cores = cwds.flatMap((d) => readdirSync(d).filter((f) => f.startsWith('core')));
    coreFiles += cores.length;
    const reported = ended.map(reportedBy);
    reportedCount.artifacts += reported.flatMap((r) => r.artifacts).length;
    reportedCount.runs += reported.flatMap((r) => r.runs).length;
    const problems = await walkStore(home, { artifacts: reported.flatMap((r) => r.artifacts), runs: reported.flatMap((r) => r.runs) });
    // `helix store check` too: it also walks the free-page list.
    const check = await helix(options.cli ?? builtCli, ['store', 'check', '--home', home], home, options.timeoutMs, 'store check');
    if (check.code !== 0)
      problems.push(`helix store check exited ${check.code ?? check.signal}: ${(check.stdout + check.stderr).slice(0, 2000)}`);
    storeProblems.push(...problems.map((p) => `trial ${trial}: ${p}`));
    if (failed) failedTrials += 1;
    if (!failed && problems.length === 0 && cores.length === 0) rmSync(home, { recursive: true, force: true });
    log(
      `trial ${trial}/${options.trials}: ${ended.filter((o) => o.code === 0).length}/${ended.length} exited 0, store ${problems.length === 0 ? 'clean' : `${problems.length} problem(s)`}, slowest ${Math.max(...ended.map((o) => o.ms))} ms`,
    );
  }
  if (options.dir === undefined && failedTrials === 0 && storeProblems.length === 0) rmSync(root, { recursive: true, force: true });
  return {
    trials: options.trials,
    processes: options.processes,
    outcomes,
    failedTrials,
    storeProblems,
    reported: reportedCount,
    failures,
    coreFiles,
    recovered,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}

/** The command line: `node dist/scripts/store-stress.js [--trials N] [--processes P] [--sizes 1,12,50] [--timeout-ms T] [--dir D] [--cli main.js]`. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      trials: { type: 'string', default: '20' },
      processes: { type: 'string', default: '8' },
      sizes: { type: 'string', default: '1,12,50,150' },
      'timeout-ms': { type: 'string', default: '300000' },
      dir: { type: 'string' },
      cli: { type: 'string' },
    },
  });
  const report = await runStress({
    trials: Number(values.trials),
    processes: Number(values.processes),
    sizesMiB: values.sizes.split(',').map(Number),
    timeoutMs: Number(values['timeout-ms']),
    ...(values.dir === undefined ? {} : { dir: path.resolve(values.dir) }),
    ...(values.cli === undefined ? {} : { cli: path.resolve(values.cli) }),
    log: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.failedTrials === 0 && report.storeProblems.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.join(packageRoot(), 'dist', 'scripts', 'store-stress.js'))
  await main();
