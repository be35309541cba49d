// The recorded call measured alone: host.call of the echo fixture, every call a new run (its
// record, events and log committed to LMDB), one after another and with many calls in flight.
// `node dist/bench/recorded-call.js` prints the figures; bench/run.ts calls measureRecordedCall.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost, type Host } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { packageRoot } from '../host/1-base/paths.js';
import { latency, throughput } from './stats.js';

/** What measureRecordedCall measures; every field has a default. */
export interface RecordedCallOptions {
  /** Sequential new runs timed for the median and p99 (default 1,000, after 100 unmeasured). */
  readonly calls?: number;
  /** New runs made for the throughput figure (default 5,000). */
  readonly throughputCalls?: number;
  /** Calls kept in flight for the throughput figure (default 64). */
  readonly inFlight?: number;
  /** The Helix home to use; default a fresh one under `tempRoot`, removed afterwards. */
  readonly home?: string;
  /** Where the fresh home is made (default the system's temporary directory). */
  readonly tempRoot?: string;
}

/** Latency (µs) of one new recorded run, runs per second with calls in flight, and the replay latency. */
export interface RecordedCallFigures {
  readonly newRun: { readonly median: number; readonly p99: number };
  readonly runsPerSecond: number;
  readonly inFlight: number;
  readonly replay: { readonly median: number; readonly p99: number };
}

const INPUT = { sequence: 'GATTACA'.repeat(8), id: 'read-0001', tags: ['bench', 'echo'], n: 42 };

/**
 * Measures host.call of the trivial echo tool (bench/fixtures/echo) on a fresh store: every call
 * has a new input, so each one executes and records a new run.
 */
export async function measureRecordedCall(options: RecordedCallOptions = {}): Promise<RecordedCallFigures> {
  const calls = options.calls ?? 1000;
  const inFlight = options.inFlight ?? 64;
  const home = options.home ?? mkdtempSync(path.join(options.tempRoot ?? tmpdir(), 'helix-bench-recorded-'));
  const host: Host = await createHost({
    toolpacksDir: path.join(packageRoot(), 'bench', 'fixtures', 'echo'),
    policy: loadPolicy(undefined),
    home,
  });
  try {
    let n = 0;
    const newRun = async (): Promise<void> => {
      const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: n++ } });
      if (r.status !== 'success' || r.replayed) throw new Error(`bench.echo did not execute: ${JSON.stringify(r.error ?? r.warnings)}`);
    };
    const lat = await latency(newRun, calls, 100);
    const runsPerSecond = await throughput(
      Array.from({ length: inFlight }, () => newRun),
      options.throughputCalls ?? 5000,
    );
    const replay = await latency(
      async () => {
        const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: 0 } });
        if (!r.replayed) throw new Error('expected a replay');
      },
      calls,
      100,
    );
    return { newRun: lat, runsPerSecond, inFlight, replay };
  } finally {
    await host.close();
    if (options.home === undefined) rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const env = process.env;
  const f = await measureRecordedCall({
    calls: Number(env.BENCH_RECORDED_CALLS ?? 1000),
    throughputCalls: Number(env.BENCH_RECORDED_THROUGHPUT_CALLS ?? 5000),
    inFlight: Number(env.BENCH_RECORDED_IN_FLIGHT ?? 64),
    ...(env.BENCH_RECORDED_TEMP === undefined ? {} : { tempRoot: env.BENCH_RECORDED_TEMP }),
  });
  process.stdout.write(
    `host.call new run: median ${f.newRun.median.toFixed(0)} µs, p99 ${f.newRun.p99.toFixed(0)} µs; ${f.runsPerSecond.toFixed(0)} runs/s with ${f.inFlight} in flight; replay median ${f.replay.median.toFixed(0)} µs\n`,
  );
}
