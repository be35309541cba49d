// The start rows: a replayed `helix call` of a trivial bundled tool, process start to exit,
// against `helix --help`; and the cold start of a generated large module (createHost and its
// first call) against V8's compile of it, then a second start on the same store (cached start).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../host/1-base/paths.js';
import { COLD_TOOL, writeColdToolpack, type ColdStartFigures } from './cold-start.js';
import { sizeText, type BenchConfig } from './options.js';
import { timeHelix, timeProcess } from './processes.js';
import { makeRow, type Row } from './rows.js';
import { median } from './stats.js';

const TRIVIAL = { tool: 'seq.gc_content', input: { sequence: 'GATTACA' } };

/** Replayed `helix call` (bundled toolpacks) and `helix --help`, alternated: wall median, target 300 ms. */
async function replayRows(config: BenchConfig): Promise<Row[]> {
  const home = mkdtempSync(path.join(tmpdir(), 'helix-bench-replay-'));
  const args = ['call', TRIVIAL.tool, '--home', home, '--compact', '--input', JSON.stringify(TRIVIAL.input)];
  try {
    await timeHelix(args);
    const help: number[] = [];
    const replay: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < config.startRepeats; i++) {
      help.push((await timeHelix(['--help'])).ms);
      const t = await timeHelix(args, { captureStdout: true, probe: true });
      if ((JSON.parse(t.stdout) as { replayed?: boolean }).replayed !== true)
        throw new Error(`${TRIVIAL.tool} did not replay: ${t.stdout.slice(0, 200)}`);
      replay.push(t.ms);
      cpu.push(t.cpuMs!);
    }
    return [
      makeRow({
        id: 'start.replay',
        name: `helix call ${TRIVIAL.tool} replayed (bundled toolpacks), process start to exit`,
        unit: 'ms',
        figure: median(replay),
        baseline: { name: 'node dist/cli/main.js --help', figure: median(help) },
        target: { of: 'figure', op: '<=', value: 300 },
        samples: replay.length,
        note: `CPU ${median(cpu).toFixed(0)} ms`,
      }),
    ];
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** One cold-start process on `home` (bench/cold-start.ts). */
async function coldStart(plugins: string, home: string, n: number): Promise<ColdStartFigures> {
  const script = path.join(packageRoot(), 'dist', 'bench', 'cold-start.js');
  const t = await timeProcess(process.execPath, [script, plugins, home, String(n)], { captureStdout: true });
  return JSON.parse(t.stdout) as ColdStartFigures;
}

/**
 * Cold start (a new store) and a second start on the same store, each in a process of its own.
 * Without a cache of instrumented modules in the store the second start does the same work; with
 * one it is the cached start.
 */
async function coldRows(config: BenchConfig): Promise<Row[]> {
  const work = mkdtempSync(path.join(tmpdir(), 'helix-bench-cold-'));
  try {
    const plugins = path.join(work, 'plugins');
    const size = writeColdToolpack(plugins, config.coldModuleBytes);
    const cold: number[] = [];
    const cached: number[] = [];
    const compile: number[] = [];
    for (let i = 0; i < config.repeats; i++) {
      const home = path.join(work, `home-${i}`);
      const first = await coldStart(plugins, home, 1);
      const second = await coldStart(plugins, home, 2);
      cold.push(first.startMs);
      cached.push(second.startMs);
      compile.push(first.compileMs, second.compileMs);
      rmSync(home, { recursive: true, force: true });
    }
    const name = `${COLD_TOOL} (${sizeText(size)} module)`;
    return [
      makeRow({
        id: 'start.cold',
        name: `cold start of ${name}: createHost on a new store and the first call`,
        unit: 'ms',
        figure: median(cold),
        baseline: { name: 'WebAssembly.compile of the module alone', figure: median(compile) },
        samples: cold.length,
      }),
      makeRow({
        id: 'start.cached',
        name: `second start of ${name} on the same store (the cached start)`,
        unit: 'ms',
        figure: median(cached),
        baseline: { name: 'cold start', figure: median(cold) },
        samples: cached.length,
      }),
    ];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The replay and cold-start rows. */
export async function startRows(config: BenchConfig): Promise<Row[]> {
  return [...(await replayRows(config)), ...(await coldRows(config))];
}
