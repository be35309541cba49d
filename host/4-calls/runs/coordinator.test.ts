// When a run commits (ABI-STORE-034, ABI-STORE-035), on a real store: a short run in one commit,
// a long one's start committed while it executes, runs ending together in one commit, and an
// attempt another coordinator recorded first left to that record.
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import type { RunEvent } from '../../../abi/index.js';
import { newestCommitIn } from '../../3-store/header.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { readActiveRuns } from '../../3-store/runs.js';
import { RunCoordinator } from './coordinator.js';
import { getRun, runEvents, type RunFinisher, type RunStart } from './run-store.js';

let t: { dir: string; cleanup: () => void };
let store: Store;

beforeEach(() => {
  t = tempDir('helix-coordinator-');
  store = openStore(t.dir);
});

afterEach(async () => {
  await store.close();
  t.cleanup();
});

const commits = (): number => newestCommitIn(store.path);

const sha = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

function runStart(n: number): RunStart {
  const params = JSON.stringify({ n });
  const policy = '{"version":1}';
  return {
    run_id: `run_${createHash('sha256').update(params).digest('hex').slice(0, 32)}`,
    tool_id: 't.echo',
    tool_version: '1.0.0',
    contract_version: 'v1',
    module_digest: null,
    policy_hash: sha(policy),
    canonical_policy: policy,
    params_hash: sha(params),
    canonical_params: params,
    inputs: [],
    idempotency_key: null,
    call_id: `call-${n}`,
  };
}

const succeeded: RunFinisher = () => ({
  status: 'succeeded',
  result: { status: 'success', output: { ok: true }, warnings: [] },
  metrics: { duration_ms: 1, fuel_used: 1, memory_peak_pages: 1 },
  outputs: [],
  log_artifact_id: null,
});
const kinds = (events: RunEvent[]): string[] => events.map((e) => e.kind);
const FAR = Date.now() + 60_000;

describe('RunCoordinator commits', () => {
  it('records a short run in one commit, its started event kept for the log until then', async () => {
    const coordinator = new RunCoordinator(store, Date.now, 60_000);
    const start = runStart(1);
    const before = commits();
    let unstored: string[] = [];
    const outcome = await coordinator.run(start, FAR, async (unstoredEvents) => {
      expect(getRun(store, start.run_id)).toBeUndefined();
      unstored = kinds(unstoredEvents());
      return succeeded;
    });
    expect(unstored).toEqual(['started']);
    expect(commits()).toBe(before + 1);
    expect(outcome).toMatchObject({ replayed: false, joined: false, record: { status: 'succeeded', attempts: 1, owner: null } });
    expect(kinds(runEvents(store, start.run_id))).toEqual(['started', 'finished']);
    expect(readActiveRuns(store)).toEqual([]);
  });

  it('commits the start of a run still executing after beginAfterMs, so it shows running', async () => {
    const coordinator = new RunCoordinator(store, Date.now, 0);
    const start = runStart(2);
    let unstored: string[] = ['not asked'];
    const outcome = await coordinator.run(start, FAR, async (unstoredEvents) => {
      for (let i = 0; i < 2000 && getRun(store, start.run_id) === undefined; i++) await new Promise((r) => setTimeout(r, 5));
      expect(getRun(store, start.run_id)).toMatchObject({ status: 'running', attempts: 1 });
      expect(readActiveRuns(store).map((a) => a.runId)).toEqual([start.run_id]);
      unstored = kinds(unstoredEvents());
      return succeeded;
    });
    expect(unstored).toEqual([]);
    expect(outcome.record).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(kinds(runEvents(store, start.run_id))).toEqual(['started', 'finished']);
    expect(readActiveRuns(store)).toEqual([]);
  });

  it('ends runs that finish together in one commit', async () => {
    const coordinator = new RunCoordinator(store, Date.now, 60_000);
    const before = commits();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runs = [3, 4, 5, 6].map((n) =>
      coordinator.run(runStart(n), FAR, async () => {
        await gate;
        return succeeded;
      }),
    );
    release();
    const outcomes = await Promise.all(runs);
    expect(outcomes.map((o) => o.record.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(commits()).toBe(before + 1);
  });

  it('leaves a run another coordinator recorded meanwhile as that one recorded it', async () => {
    const first = new RunCoordinator(store, Date.now, 60_000);
    const second = new RunCoordinator(store, Date.now, 60_000);
    const start = runStart(7);
    let abandoned = false;
    const outcome = await first.run(start, FAR, async () => {
      const other = await second.run(start, FAR, async () => succeeded);
      expect(other.record.status).toBe('succeeded');
      return Object.assign((() => ({ ...succeeded(other.record), status: 'failed' })) as RunFinisher, {
        abandon: () => (abandoned = true),
      });
    });
    expect(abandoned).toBe(true);
    expect(outcome).toMatchObject({ joined: true, record: { status: 'succeeded', attempts: 1 } });
    expect(kinds(runEvents(store, start.run_id))).toEqual(['started', 'finished']);
  });
});
