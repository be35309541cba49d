// What an MCP server needs from a call: cancellation, progress and live log lines; and the
// built-in tools over runs and imports, recorded like toolpacks.
import { utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost, type Host } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { compileGuest } from './helpers/as-guest.js';
import { numberResultModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const SLOW = `(local.set $v (i64.const 400000000))
  (block $b (loop $l (br_if $b (i64.eqz (local.get $v))) (local.set $v (i64.sub (local.get $v) (i64.const 1))) (br $l)))
  (i64.extend_i32_u (local.get $len))`;
// Far longer than any test waits: this call ends only when the test cancels it.
const ENDLESS = SLOW.replace('400000000', '4000000000000');
let host: Host;
let plugins: { dir: string; cleanup: () => void };
const home = tempDir('helix-home-');

beforeAll(async () => {
  const script = await compileGuest('script.ts');
  plugins = await toolpacksDir([
    {
      id: 'o.slow',
      module: numberResultModule(SLOW),
      manifest: { timeoutMs: 60_000, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e13 } },
      outputSchema: { type: 'object' },
    },
    {
      id: 'o.endless',
      module: numberResultModule(ENDLESS),
      manifest: { timeoutMs: 120_000, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e15 } },
      outputSchema: { type: 'object' },
    },
    {
      id: 'o.script',
      module: script,
      manifest: {
        limits: { maxInputBytes: 100_000, maxOutputBytes: 100_000, fuel: 1e10, maxMemoryPages: 256, maxCapabilityCalls: 100 },
        capabilities: { abiVersion: 1, allow: ['log.emit', 'clock.now_unix'] },
      },
    },
  ]);
  // The default policy takes the working directory as its import root: import from under it.
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, progressIntervalMs: 50 });
}, 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

describe('call options', () => {
  it('cancel a running call: the worker stops, the run is recorded as failed, the pool keeps serving', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: 'o.slow', input: { c: 1 } }, { signal: abort.signal }));
    expect(r.error?.code).toBe('R-TIMEOUT-CANCELLED');
    expect(r.metrics.duration_ms).toBeLessThan(5000);
    expect(getRun(hostStore(host), r.run_id!)).toMatchObject({ status: 'failed', result: { error: { code: 'R-TIMEOUT-CANCELLED' } } });
    const after = await host.call({ tool_id: 'o.script', input: { calls: [] } });
    expect(after.status).toBe('success');
  });

  it('report progress while a long call runs, with elapsed time increasing, and stop when it ends', async () => {
    // Behaviour, not a tick count (a busy machine delays ticks): the call cannot end before three
    // reports arrive, because the third one cancels it; after it ends no report comes.
    const seen: Array<{ elapsed_ms: number; capability_calls: number }> = [];
    const abort = new AbortController();
    const onProgress = (p: { elapsed_ms: number; capability_calls: number }): void => {
      seen.push(p);
      if (seen.length === 3) abort.abort();
    };
    const r = await host.call({ tool_id: 'o.endless', input: { p: 1 } }, { onProgress, signal: abort.signal });
    expect(r.error?.code).toBe('R-TIMEOUT-CANCELLED');
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.elapsed_ms).toBeGreaterThan(seen[i - 1]!.elapsed_ms);
    expect(seen.every((p) => p.capability_calls === 0 && p.elapsed_ms <= r.metrics.duration_ms)).toBe(true);
    const count = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen.length, 'no progress after the call ended').toBe(count);
  });

  it('report progress on a call that succeeds, and none after it ends', async () => {
    const seen: Array<{ elapsed_ms: number }> = [];
    const r = await host.call({ tool_id: 'o.slow', input: { p: 1 } }, { onProgress: (p) => seen.push(p) });
    expect(r.status).toBe('success');
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.elapsed_ms).toBeGreaterThan(seen[i - 1]!.elapsed_ms);
    expect(seen.every((p) => p.elapsed_ms <= r.metrics.duration_ms)).toBe(true);
    const count = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen.length, 'no progress after the call ended').toBe(count);
  });

  it("pass the guest's log lines to the caller as they are emitted", async () => {
    const lines: Array<{ event: string; fields: Record<string, unknown> }> = [];
    const r = await host.call(
      { tool_id: 'o.script', input: { calls: [{ name: 'log.emit', args: { event: 'step', fields: { n: 1 } } }] } },
      { onLog: (l) => lines.push(l) },
    );
    expect(r.status).toBe('success');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', event: 'step', fields: { n: 1 } })]);
  });
});

describe('built-in tools over imports and runs', () => {
  it('helix.artifact_import imports once per unchanged file and again when it changes', async () => {
    const dir = tempDir('helix-import-', process.cwd());
    try {
      const file = path.join(dir.dir, 'reads.fa');
      writeFileSync(file, '>r1\nACGT\n');
      const a = ResponseEnvelopeSchema.parse(await host.call({ tool_id: 'helix.artifact_import', input: { path: file, label: 'reads' } }));
      expect(a.status).toBe('success');
      expect(a.output).toMatchObject({ type: 'fasta', size: 9, label: 'reads' });
      const again = await host.call({ tool_id: 'helix.artifact_import', input: { path: file, label: 'reads' } });
      expect(again).toMatchObject({ replayed: true, run_id: a.run_id });
      writeFileSync(file, '>r1\nACGTT\n');
      utimesSync(file, new Date(), new Date(Date.now() + 5000));
      const changed = await host.call({ tool_id: 'helix.artifact_import', input: { path: file, label: 'reads' } });
      expect(changed.replayed).toBe(false);
      expect(changed.output).toMatchObject({ size: 10 });
      const outside = await host.call({ tool_id: 'helix.artifact_import', input: { path: '/etc/hostname' } });
      expect(outside.error?.code).toBe('A-AUTH-PATH-OUTSIDE-ROOTS');
    } finally {
      dir.cleanup();
    }
  });

  it('helix.run_get and helix.run_verify read and check a recorded run', async () => {
    const r = await host.call({ tool_id: 'o.script', input: { calls: [{ name: 'clock.now_unix', args: {} }] } });
    const got = await host.call({ tool_id: 'helix.run_get', input: { run_id: r.run_id } });
    expect(got.output).toMatchObject({ run_id: r.run_id, status: 'succeeded', tool_id: 'o.script', journal: { entries: 1 } });
    const verified = await host.call({ tool_id: 'helix.run_verify', input: { run_id: r.run_id } });
    expect(verified.output).toMatchObject({ run_id: r.run_id, match: true });
    expect((await host.call({ tool_id: 'helix.run_get', input: { run_id: `run_${'0'.repeat(32)}` } })).error?.code).toBe(
      'P-PRECOND-RUN-NOT-FOUND',
    );
  });
});
