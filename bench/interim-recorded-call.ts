// The recorded call (host.call of the echo fixture, every call a new run committed to LMDB):
// latency one after another, runs/s with calls in flight, and the replay. Interim: the same
// interface as bench/recorded-call.ts (issue 13, the recorded call); switch the import to it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHost } from '../host/index.js';
import { loadPolicy } from '../host/policy/load-policy.js';
import { packageRoot } from '../host/paths.js';
import { latency, throughput } from './stats.js';

/** What measureRecordedCall measures; every field has a default. */
export interface RecordedCallOptions {
  /** Sequential new runs timed (default 1,000, after 100 unmeasured). */
  readonly calls?: number;
  /** New runs made for the throughput figure (default 5,000). */
  readonly throughputCalls?: number;
  /** Calls kept in flight for the throughput figure (default 64). */
  readonly inFlight?: number;
}

/** Latency (µs) of a new recorded run and of a replay; runs per second with calls in flight. */
export interface RecordedCallFigures {
  readonly newRun: { readonly median: number; readonly p99: number };
  readonly runsPerSecond: number;
  readonly inFlight: number;
  readonly replay: { readonly median: number; readonly p99: number };
}

const INPUT = { sequence: 'GATTACA'.repeat(8), id: 'read-0001', tags: ['bench', 'echo'], n: 42 };

/** Measures host.call of bench.echo on a fresh store; each call has a new `n`, so each one executes. */
export async function measureRecordedCall(options: RecordedCallOptions = {}): Promise<RecordedCallFigures> {
  const calls = options.calls ?? 1000;
  const inFlight = options.inFlight ?? 64;
  const home = mkdtempSync(path.join(tmpdir(), 'helix-bench-recorded-'));
  const host = await createHost({ pluginsDir: path.join(packageRoot(), 'bench', 'fixtures', 'echo'), policy: loadPolicy(undefined), home });
  try {
    let n = 0;
    const newRun = async (): Promise<void> => {
      const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: n++ } });
      if (r.status !== 'success' || r.replayed) throw new Error(`bench.echo did not execute: ${JSON.stringify(r.error ?? r.warnings)}`);
    };
    const lat = await latency(newRun, calls, Math.min(100, calls));
    const runsPerSecond = await throughput(Array.from({ length: inFlight }, () => newRun), options.throughputCalls ?? 5000);
    const replay = await latency(async () => {
      const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: 0 } });
      if (!r.replayed) throw new Error('expected a replay');
    }, calls, Math.min(100, calls));
    return { newRun: lat, runsPerSecond, inFlight, replay };
  } finally {
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}
