// The reads a reviewer makes of a store, against a real host and a real LMDB file: the Host's typed
// reads of a run's journal, the audit trail and module records, and the store's diagnostic face
// (host.diagnostics, openDiagnostics), which reads records as stored and plants and restores
// damage that the typed reads then refuse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHelixError, type ResponseEnvelope } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { openDiagnostics, ownerOf, STORE_MARKERS } from '../host/5-host/store-upkeep.js';
import { stormGuest } from '../conformance/kit/io-guests.js';
import { echoModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const home = tempDir('helix-reviewer-reads-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;
let calls: ResponseEnvelope;
let echo: ResponseEnvelope;

beforeAll(async () => {
  plugins = await toolpacksDir([
    { id: 't.calls', module: stormGuest(3), manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } } },
    { id: 't.echo', module: echoModule() },
  ]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, warn: () => undefined });
  calls = await host.call({ tool_id: 't.calls', input: {} });
  echo = await host.call({ tool_id: 't.echo', input: { n: 1 } });
});

afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

describe("the Host's reads of journals, audit and modules", () => {
  it("lists a run's journal in call order, and none for a run that made no call or does not exist", () => {
    expect(calls.status).toBe('success');
    const journal = host.runs.journal(calls.run_id!);
    expect(journal.map((e) => [e.seq, e.name, e.outcome])).toEqual([
      [0, 'clock.now_unix', 'ok'],
      [1, 'clock.now_unix', 'ok'],
      [2, 'clock.now_unix', 'ok'],
    ]);
    expect(host.runs.get(calls.run_id!)?.journal.head).toBe(journal[2]!.hash);
    expect(host.runs.journal(echo.run_id!)).toEqual([]);
    expect(host.runs.journal(`run_${'0'.repeat(32)}`)).toEqual([]);
  });

  it('lists audit records in time order, of one run and of one kind when asked', () => {
    const mine = host.audit.list({ runId: calls.run_id!, kind: 'capability' });
    expect(mine.map((a) => a.decision)).toEqual(['allowed', 'allowed', 'allowed']);
    expect(mine.every((a) => a.run_id === calls.run_id && typeof a.at === 'number')).toBe(true);
    const all = host.audit.list();
    expect(all.length).toBeGreaterThanOrEqual(mine.length);
    expect(all.map((a) => a.at)).toEqual([...all.map((a) => a.at)].sort((x, y) => x - y));
    expect(host.audit.list({ runId: echo.run_id!, kind: 'capability' })).toEqual([]);
  });

  it('gives the record of a loaded module by digest, and nothing for a digest never loaded', () => {
    const record = host.modules.get(echo.provenance.digest!);
    expect(record).toMatchObject({ digest: echo.provenance.digest, abi: 'helix/v1' });
    expect(record?.tools).toContain('t.echo@1.0.0');
    expect(host.modules.get(`sha256:${'0'.repeat(64)}`)).toBeUndefined();
  });
});

describe("the store's diagnostic face", () => {
  it('reads a record as stored, plants one that does not decode (refused by the typed read), and restores it', async () => {
    const d = host.diagnostics;
    const runId = echo.run_id!;
    expect((d.record('runs', runId) as { run_id: string }).run_id).toBe(runId);
    expect(d.has('runs', runId)).toBe(true);
    const planted = await d.plant('runs', runId, Buffer.from([0xd9, 0x19, 0x61]));
    expect(planted.bytes).toBeInstanceOf(Buffer);
    const refused = (() => {
      try {
        host.runs.get(runId);
        return undefined;
      } catch (e) {
        return isHelixError(e) ? e.code : String(e);
      }
    })();
    expect(refused).toBe('D-DATA-RECORD-INVALID');
    await d.restore([planted]);
    expect(host.runs.get(runId)?.status).toBe('succeeded');
  });

  it("counts and lists keys, gives a blob's chunks, and removes a planted key on restore", async () => {
    const d = host.diagnostics;
    const art = await host.artifacts.importInline(Buffer.alloc(2 * 1024 * 1024 + 1, 0x41), { maxBytes: 8 << 20 });
    const chunks = d.chunksOf(art.sha256);
    expect(chunks).toHaveLength(3);
    for (const c of chunks!) expect(d.bytes('chunks', c)).toBeInstanceOf(Buffer);
    expect(d.chunksOf('0'.repeat(64))).toBeUndefined();
    const before = d.count('kv');
    const planted = await d.plant('kv', ['t.echo', 'planted'], { n: 1 });
    expect(planted.bytes).toBeUndefined();
    expect(d.count('kv')).toBe(before + 1);
    expect(d.keys('kv', { start: ['t.echo', ''], end: ['t.echo', '\uffff'] })).toEqual([['t.echo', 'planted']]);
    await d.restore([planted]);
    expect(d.count('kv')).toBe(before);
  });

  it('writes chunks held by a pending write of this process, which gc keeps until they are discarded', async () => {
    const d = host.diagnostics;
    async function* source(): AsyncGenerator<Uint8Array> {
      yield Buffer.alloc(1000, 0x5a);
    }
    const blob = await d.writeChunks(source());
    const held = d.keys('pending').filter((k) => Array.isArray(k) && k[1] !== STORE_MARKERS.pendingHeader);
    expect(held.length).toBeGreaterThanOrEqual(1);
    const kept = await d.collectGarbage({ dryRun: true });
    expect(kept.kept.live_pending_writes).toBeGreaterThanOrEqual(1);
    await d.discardChunks(blob);
    const after = await d.collectGarbage();
    expect(after.removed.chunks).toBeGreaterThanOrEqual(1);
    expect(d.has('chunks', blob.chunks[0]!)).toBe(false);
  });

  it('opens over a home with no Host, as another process would, and sees the same records and commits', async () => {
    await host.diagnostics.flushed();
    const other = openDiagnostics(home.dir);
    try {
      expect(other.path).toBe(host.storePath);
      expect((other.record('runs', calls.run_id!) as { status: string }).status).toBe('succeeded');
      expect(other.newestCommit()).toBe(host.diagnostics.newestCommit());
      expect(other.activeRuns()).toEqual([]);
    } finally {
      await other.close();
    }
    expect(ownerOf(process.pid)).toMatchObject({ pid: process.pid });
  });
});
