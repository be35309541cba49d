// Runs end to end: identity, replay without execution, in-flight join (in one process and
// across processes), idempotency, input linking by content, snapshot boundaries, blocked and
// interrupted runs. Real modules, real LMDB, real worker threads, real child processes.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost, type Host } from '../host/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { readAudit } from '../host/3-store/audit.js';
import { readModuleRecord } from '../host/3-store/modules.js';
import { readActiveRuns } from '../host/3-store/runs.js';
import { echoModule, numberResultModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
/** Busy-loops about 60 M iterations (a few hundred ms), then answers the input length. */
const SLOW = `(local.set $v (i64.const 60000000))
  (block $b (loop $l (br_if $b (i64.eqz (local.get $v))) (local.set $v (i64.sub (local.get $v) (i64.const 1))) (br $l)))
  (i64.extend_i32_u (local.get $len))`;
/** The same loop, about 400 M iterations: runs well past BEGIN_AFTER_MS, so its start is committed and seen by another process. */
const SLOWER = SLOW.replace('60000000', '400000000');
const readsSchema = {
  type: 'object',
  required: ['reads'],
  properties: { reads: { type: 'string', 'x-helix-artifact': true }, note: { type: 'string' } },
};

let host: Host;
let plugins: { dir: string; cleanup: () => void };
const home = tempDir('helix-home-');
const outputSchema = { type: 'object' };

beforeAll(async () => {
  plugins = await toolpacksDir([
    { id: 'r.echo', module: echoModule() },
    {
      id: 'r.slow',
      module: numberResultModule(SLOW),
      manifest: { timeoutMs: 60_000, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e12 } },
      outputSchema,
    },
    {
      id: 'r.slower',
      module: numberResultModule(SLOWER),
      manifest: { timeoutMs: 60_000, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e12 } },
      outputSchema,
    },
    { id: 'r.trap', module: numberResultModule('(unreachable)'), outputSchema },
    { id: 'r.reads', module: echoModule(), inputSchema: readsSchema },
  ]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, policy: loadPolicy(undefined) });
});
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

async function call(tool_id: string, input: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<ResponseEnvelope> {
  return ResponseEnvelopeSchema.parse(await host.call({ tool_id, input, ...extra }));
}

describe('runs', () => {
  it('replays a succeeded run without executing it again', async () => {
    const first = await call('r.echo', { x: 'replay-me' });
    const second = await call('r.echo', { x: 'replay-me' });
    expect(first).toMatchObject({ status: 'success', replayed: false });
    expect(second).toMatchObject({ status: 'success', replayed: true, run_id: first.run_id, output: first.output });
    expect(second.metrics.fuel_used).toBe(0);
    expect(second.warnings.join()).toMatch(/replayed: run run_/);
    const record = host.runs.get(first.run_id!)!;
    expect(record).toMatchObject({ status: 'succeeded', attempts: 1, tool_id: 'r.echo' });
    expect(host.runs.events(first.run_id!).map((e) => e.kind)).toEqual(['started', 'finished']);
    expect(record.log_artifact_id).toMatch(/^art_/);
    // The module the run names is described in the store.
    expect(readModuleRecord(hostStore(host), record.module_digest!)).toMatchObject({
      digest: record.module_digest,
      abi: 'helix/v1',
      tools: expect.arrayContaining(['r.echo@1.0.0']),
    });
  });

  it('joins concurrent identical calls to one execution', async () => {
    const all = await Promise.all(Array.from({ length: 6 }, () => call('r.slow', { k: 'join' })));
    expect(new Set(all.map((r) => r.run_id)).size).toBe(1);
    expect(all.every((r) => r.status === 'success' && JSON.stringify(r.output) === JSON.stringify(all[0]!.output))).toBe(true);
    expect(all.filter((r) => r.warnings.some((w) => w.startsWith('joined:'))).length).toBe(5);
    expect(host.runs.get(all[0]!.run_id!)!.attempts).toBe(1);
  });

  it('runs a failed run again on the next identical call', async () => {
    const a = await call('r.trap', { n: 1 });
    const b = await call('r.trap', { n: 1 });
    expect([a.error?.code, b.error?.code]).toEqual(['S-TOOL-TRAP', 'S-TOOL-TRAP']);
    expect(b.replayed).toBe(false);
    expect(host.runs.get(a.run_id!)).toMatchObject({ status: 'failed', attempts: 2 });
  });

  it('refuses an idempotency key reused for a different request', async () => {
    const key = 'key-0123456789abcdef';
    const a = await call('r.echo', { v: 1 }, { constraints: { idempotency_key: key } });
    const again = await call('r.echo', { v: 1 }, { constraints: { idempotency_key: key } });
    const other = await call('r.echo', { v: 2 }, { constraints: { idempotency_key: key } });
    expect(again).toMatchObject({ replayed: true, run_id: a.run_id });
    expect(other.error).toMatchObject({ code: 'I-REQ-IDEMPOTENCY-CONFLICT', details: { bound_run_id: a.run_id } });
  });

  it('binds a key first presented on a replayed call, so it cannot be reused for a different request', async () => {
    const key = 'key-replayed-000000000001';
    const plain = await call('r.echo', { v: 'bound-on-replay' });
    const keyed = await call('r.echo', { v: 'bound-on-replay' }, { constraints: { idempotency_key: key } });
    expect(keyed).toMatchObject({ status: 'success', replayed: true, run_id: plain.run_id });
    const other = await call('r.echo', { v: 'another request' }, { constraints: { idempotency_key: key } });
    expect(other.error).toMatchObject({ code: 'I-REQ-IDEMPOTENCY-CONFLICT', details: { bound_run_id: plain.run_id } });
    expect(await call('r.echo', { v: 'bound-on-replay' }, { constraints: { idempotency_key: key } })).toMatchObject({
      status: 'success',
      replayed: true,
      run_id: plain.run_id,
    });
  });

  it('links input artifacts and identifies them by content, not by id', async () => {
    const one = await host.artifacts.importInline('>r1\nACGT\n', { label: 'reads' });
    const same = await host.artifacts.importInline('>r1\nACGT\n', { label: 'same bytes, new artifact' });
    const a = await call('r.reads', { reads: one.id });
    expect(a.status).toBe('success');
    expect(host.runs.get(a.run_id!)!.inputs).toEqual([{ role: 'reads', artifact_id: one.id, sha256: one.sha256 }]);
    const b = await call('r.reads', { reads: same.id });
    expect(b).toMatchObject({ replayed: true, run_id: a.run_id });
    expect((await call('r.reads', { reads: 'art_0000000000000000000000000Z' })).error?.code).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
    expect((await call('r.reads', { reads: 'not-an-id' })).error?.code).toBe('I-REQ-INPUT');
  });

  it('keeps artifact_list replays true to their snapshot after new imports', async () => {
    await host.artifacts.importInline('one\n');
    const first = await call('helix.artifact_list', {});
    const asOf = (first.output as { as_of_created_at: number }).as_of_created_at;
    const count = (first.output as { artifact_count: number }).artifact_count;
    expect((await call('helix.artifact_list', {})).replayed).toBe(true);
    await host.artifacts.importInline('two\n');
    const later = await call('helix.artifact_list', {});
    expect(later.replayed).toBe(false);
    expect((later.output as { artifact_count: number }).artifact_count).toBe(count + 1);
    const pinned = await call('helix.artifact_list', { as_of_created_at: asOf });
    expect((pinned.output as { artifacts: unknown[] }).artifacts).toHaveLength(count);
    expect((await call('helix.artifact_list', { as_of_created_at: asOf })).replayed).toBe(true);
    expect((host.runs.get(first.run_id!)!.result!.output as { artifacts: unknown[] }).artifacts).toHaveLength(count);
  });

  it('records a call the policy refuses as a blocked run, with an audit record', async () => {
    const file = path.join(plugins.dir, 'deny.policy.yaml');
    writeFileSync(file, 'version: 1\ntools: { allow: ["r.echo"] }\n');
    const denying = await createHost({ toolpacksDir: plugins.dir, home: tempDir('helix-home-').dir, policyFile: file });
    try {
      const r = ResponseEnvelopeSchema.parse(await denying.call({ tool_id: 'r.trap', input: {} }));
      expect(r.error?.code).toBe('A-AUTH-TOOL-DENIED');
      expect(denying.runs.get(r.run_id!)).toMatchObject({ status: 'blocked', result: { error: { code: 'A-AUTH-TOOL-DENIED' } } });
      expect(readAudit(hostStore(denying)).some((a) => a.kind === 'run.blocked' && a.run_id === r.run_id)).toBe(true);
      // The same call under another policy is another run: the policy hash is part of its identity.
      const allowed = await call('r.trap', {});
      expect(allowed.run_id).not.toBe(r.run_id);
    } finally {
      await denying.close();
    }
  });

  it('joins a run another process is executing on the same store', async () => {
    const child = run(process.execPath, [
      cli,
      'call',
      'r.slower',
      '--toolpacks',
      plugins.dir,
      '--home',
      home.dir,
      '--input',
      '{"k":"cross-process"}',
      '--compact',
    ]);
    // Wait until the child's run is recorded as running (its start commits once it has run for
    // BEGIN_AFTER_MS, ABI-STORE-034), then make the same call here. A child starting on a loaded
    // machine can take seconds: the bound is time, generous.
    let runId: string | undefined;
    for (const end = Date.now() + 60_000; runId === undefined && Date.now() < end; ) {
      for (const active of readActiveRuns(hostStore(host))) runId = active.runId;
      if (runId === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    expect(runId).toBeDefined();
    const here = await call('r.slower', { k: 'cross-process' });
    const there = ResponseEnvelopeSchema.parse(JSON.parse((await child).stdout));
    expect(here.run_id).toBe(runId);
    expect(there.run_id).toBe(runId);
    expect(here.warnings.join()).toMatch(/joined:/);
    expect(here.output).toEqual(there.output);
    expect(host.runs.get(runId!)!.attempts).toBe(1);
  });
});
