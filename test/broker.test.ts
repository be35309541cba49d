// The capability broker end to end: a real AssemblyScript guest (built with the SDK in the set-up)
// makes the calls its input lists; the real broker, store and policy answer them.
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { getArtifact, importInline } from '../host/4-calls/artifacts/index.js';
import { brokenLink, entryHash, readJournal } from '../host/4-calls/broker/journal.js';
import { hostStore } from '../host/5-host/host.js';
import { verifyRun } from '../host/4-calls/runs/verify.js';
import { createHost, type Host } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { readAudit } from '../host/3-store/audit.js';
import { rawDatabases } from '../host/3-store/raw-access.js';
import { compileGuest } from './helpers/as-guest.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const SECRET = 'hunter2-s3cr3t-VALUE-7f3a9';
const ALL = ['clock.now_unix', 'log.emit', 'kv.get', 'kv.put', 'kv.delete', 'kv.list', 'artifact.stat', 'artifact.read', 'artifact.list'];
const limits = { maxInputBytes: 4_000_000, maxOutputBytes: 4_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 1000 };
const home = tempDir('helix-home-');
let host: Host;
let plugins: { dir: string; cleanup: () => void };
let server: Server;
let origin: string;

beforeAll(async () => {
  // A local upstream: /hello answers at once, /hang never answers.
  server = createServer((req, res) => {
    if (req.url === '/hello') res.end('hello from upstream');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const script = await compileGuest('script.ts');
  plugins = await toolpacksDir([
    { id: 'b.script', module: script, manifest: { limits, capabilities: { abiVersion: 1, allow: [...ALL, 'secrets.get.db_password'] } } },
    { id: 'b.other', module: script, manifest: { limits, capabilities: { abiVersion: 1, allow: ['kv.get'] } } },
    {
      id: 'b.limited',
      module: script,
      manifest: { limits: { ...limits, maxCapabilityCalls: 5 }, capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
    },
    {
      id: 'b.http',
      module: script,
      manifest: { timeoutMs: 1500, limits, capabilities: { abiVersion: 1, allow: ['http.request'], network: [origin] } },
    },
    {
      id: 'b.writer',
      module: script,
      manifest: {
        limits,
        capabilities: { abiVersion: 1, allow: ['artifact.write'] },
        declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }],
      },
    },
  ]);
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  writeFileSync(
    policyFile,
    [
      'version: 1',
      'tools: { allow: ["*"] }',
      'grants:',
      '  "*": ["clock.*", "log.*", "kv.*", "artifact.*"]',
      '  b.script: ["secrets.get.db_password"]',
      '  b.http: ["http.request"]',
      'secrets:',
      '  db_password: { env: HELIX_TEST_DB_PASSWORD }',
      'network:',
      `  allow: ["${origin}"]`,
      '  allowPrivate: ["127.0.0.1"]',
      '',
    ].join('\n'),
  );
  process.env.HELIX_TEST_DB_PASSWORD = SECRET;
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
}, 120_000);
afterAll(async () => {
  await host?.close();
  server?.close();
  server?.closeAllConnections();
  plugins?.cleanup();
  home.cleanup();
});

interface Answer {
  status: 'ok' | 'error';
  capability_result?: { name: string; result: Record<string, unknown> };
  error?: { code: string; message: string; details: Record<string, unknown> };
}

async function script(tool: string, input: Record<string, unknown>): Promise<ResponseEnvelope & { answers: Answer[] }> {
  const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input }));
  return { ...r, answers: ((r.output as { answers?: Answer[] } | undefined)?.answers ?? []) as Answer[] };
}
const call = (name: string, args: Record<string, unknown> = {}) => ({ name, args });

describe('the broker', () => {
  it('answers an allowlisted call and refuses every other name with the same bytes', async () => {
    const r = await script('b.script', {
      calls: [
        call('clock.now_unix'),
        call('http.request', { url: 'https://example.org' }),
        call('no.such_thing'),
        call('secrets.get', { name: 'other' }),
      ],
    });
    expect(r.status).toBe('success');
    expect(r.answers[0]).toMatchObject({
      status: 'ok',
      capability_result: { name: 'clock.now_unix', result: { unix_ms: expect.any(Number) } },
    });
    const refused = r.answers.slice(1).map((a) => JSON.stringify(a));
    expect(new Set(refused).size).toBe(1);
    expect(r.answers[1]).toMatchObject({ status: 'error', error: { code: 'A-AUTH-FORBIDDEN', message: 'forbidden' } });
    const audit = readAudit(hostStore(host)).filter((a) => a.run_id === r.run_id);
    expect(audit.map((a) => a.decision)).toEqual(['allowed', 'forbidden', 'forbidden', 'forbidden']);
    expect(audit[2]).toMatchObject({ capability: 'no.such_thing', reason: 'unknown capability' });
  });

  it("lists every violation of a capability call's arguments", async () => {
    const r = await script('b.script', { calls: [call('kv.put', { key: '', surprise: 1 })] });
    expect(r.answers[0]!.error!.code).toBe('I-REQ-CAPABILITY-ARGS');
    expect((r.answers[0]!.error!.details.violations as unknown[]).length).toBeGreaterThanOrEqual(3);
  });

  it('stops a capability storm at the per-run call ceiling', async () => {
    const r = await script('b.limited', { storm: 'clock.now_unix' });
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 5 } });
    expect(getRun(hostStore(host), r.run_id!)!.journal.entries).toBe(6);
  });

  it('refuses oversized requests and values', async () => {
    const r = await script('b.script', {
      calls: [
        call('kv.put', { key: 'big', value: 'x'.repeat(70_000) }),
        call('log.emit', { event: 'huge', fields: { pad: 'y'.repeat(1_600_000) } }),
      ],
    });
    expect(r.answers[0]!.error!.code).toBe('I-REQ-CAPABILITY-ARGS');
    expect(r.answers[1]!.error!.code).toBe('R-CAP-PAYLOAD');
  });

  it("keeps each tool's kv namespace to itself", async () => {
    const put = await script('b.script', {
      calls: [call('kv.put', { key: 'shared', value: { n: 1 } }), call('kv.get', { key: 'shared' }), call('kv.list', { prefix: 'sh' })],
    });
    expect(put.answers[1]!.capability_result!.result).toEqual({ found: true, value: { n: 1 } });
    expect(put.answers[2]!.capability_result!.result).toEqual({ keys: ['shared'] });
    const other = await script('b.other', { calls: [call('kv.get', { key: 'shared' })] });
    expect(other.answers[0]!.capability_result!.result).toEqual({ found: false });
  });

  it('kv.delete reports whether the key was there', async () => {
    const r = await script('b.script', {
      calls: [
        call('kv.put', { key: 'gone', value: 1 }),
        call('kv.delete', { key: 'gone' }),
        call('kv.delete', { key: 'gone' }),
        call('kv.get', { key: 'gone' }),
      ],
    });
    expect(r.answers.slice(1).map((a) => a.capability_result!.result)).toEqual([{ deleted: true }, { deleted: false }, { found: false }]);
  });

  it('reads artifacts in ranges, gunzipped on request, by id', async () => {
    const text = `>r1\n${'ACGT'.repeat(1000)}\n`;
    const plain = await importInline(hostStore(host), text);
    const gz = await importInline(hostStore(host), gzipSync(text));
    const r = await script('b.script', {
      calls: [
        call('artifact.stat', { artifact_id: gz.id }),
        call('artifact.read', { artifact_id: plain.id, offset: 4, length: 8 }),
        call('artifact.read', { artifact_id: gz.id, offset: 0, length: 10, decompress: true }),
        call('artifact.read', { artifact_id: gz.id, offset: 10, length: 100_000, decompress: true }),
        call('artifact.read', { artifact_id: plain.id, length: 4, encoding: 'base64' }),
      ],
    });
    const results = r.answers.map((a) => a.capability_result?.result);
    expect(results[0]).toMatchObject({ id: gz.id, compression: 'gzip', type: 'fasta' });
    expect(results[1]).toMatchObject({ data: 'ACGTACGT', next_offset: 12, eof: false });
    expect(results[2]).toMatchObject({ data: text.slice(0, 10), eof: false });
    expect(results[3]).toMatchObject({ data: text.slice(10), eof: true });
    expect(Buffer.from((results[4] as { data: string }).data, 'base64').toString()).toBe('>r1\n');
    expect(getRun(hostStore(host), r.run_id!)!.inputs).toEqual([]);
  });

  it('makes written outputs artifacts of the run under their declared role, visible when it ends', async () => {
    const r = await script('b.writer', {
      calls: [
        call('artifact.write', { role: 'report', data: 'line 1\n' }),
        call('artifact.write', { role: 'report', data: 'line 2\n', final: true }),
        call('artifact.write', { role: 'extra', data: 'x' }),
      ],
    });
    expect(r.status).toBe('success');
    const sealed = r.answers[1]!.capability_result!.result as { artifact_id: string; sha256: string };
    expect(sealed).toMatchObject({ role: 'report', bytes: 14, artifact_id: expect.stringMatching(/^art_/) });
    expect(r.answers[2]!.error!.code).toBe('C-CONTRACT-OUTPUT-ROLE');
    const run = getRun(hostStore(host), r.run_id!)!;
    expect(run.outputs).toEqual([{ role: 'report', artifact_id: sealed.artifact_id, sha256: sealed.sha256 }]);
    expect(getArtifact(hostStore(host), sealed.artifact_id)).toMatchObject({
      type: 'text',
      size: 14,
      created_by_run: r.run_id,
      source: { kind: 'run', role: 'report' },
    });
  });

  it('fails a run that does not create exactly its declared outputs', async () => {
    const none = await script('b.writer', { calls: [] });
    expect(none.error).toMatchObject({ code: 'C-CONTRACT-DECLARED-OUTPUTS', details: { problems: ['role report was not created'] } });
    const unsealed = await script('b.writer', { calls: [call('artifact.write', { role: 'report', data: 'half' })] });
    expect(unsealed.error?.details).toMatchObject({ problems: ['role report was written but never sealed with final'] });
    const wrongType = await script('b.writer', {
      calls: [call('artifact.write', { role: 'report', data: '{"a":1}', type: 'json', final: true })],
    });
    expect(wrongType.error?.details).toMatchObject({ problems: ['role report has type json, declared text'] });
  });

  it('performs a terminal capability_call and makes its result the output', async () => {
    await script('b.script', { calls: [call('kv.put', { key: 'answer', value: 42 })] });
    const r = await script('b.script', { terminal: call('kv.get', { key: 'answer' }) });
    expect(r).toMatchObject({ status: 'success', output: { found: true, value: 42 } });
    const refused = await script('b.script', { terminal: call('http.request', { url: 'https://example.org' }) });
    expect(refused.error?.code).toBe('A-AUTH-FORBIDDEN');
  });

  it('journals every call in a hash chain the run record names', async () => {
    const r = await script('b.script', { calls: [call('clock.now_unix'), call('kv.get', { key: 'nothing' }), call('bogus.name')] });
    const run = getRun(hostStore(host), r.run_id!)!;
    const journal = readJournal(hostStore(host), r.run_id!);
    expect(journal.map((e) => [e.name, e.outcome])).toEqual([
      ['clock.now_unix', 'ok'],
      ['kv.get', 'ok'],
      ['bogus.name', 'error'],
    ]);
    expect(run.journal).toEqual({ entries: 3, head: journal[2]!.hash });
    expect(brokenLink(journal, run.journal.head)).toBeUndefined();
  });

  it('never lets a secret value reach a log, audit record, run record or journal', async () => {
    const r = await script('b.script', { leak_secret: 'db_password' });
    expect(r.status).toBe('success');
    expect((r.output as { leaked: string }).leaked).toBe('[secret:db_password]');
    // The guest did get the value; what was recorded and returned carries a marker instead.
    expect(JSON.stringify(r.output)).not.toContain(SECRET);
    expect(JSON.stringify(r.output)).toContain('[secret:db_password]');
    const run = getRun(hostStore(host), r.run_id!)!;
    const log = await import('../host/3-store/blobs.js').then((b) =>
      b.readBlobBytes(hostStore(host), getArtifact(hostStore(host), run.log_artifact_id!).sha256, 1e7),
    );
    expect(log.toString()).toContain('guest.leak');
    expect(log.toString()).not.toContain(SECRET);
    const audited = readAudit(hostStore(host)).find((a) => a.kind === 'log' && a.run_id === r.run_id);
    expect(audited).toMatchObject({ event: 'leak', fields: { value: '[secret:db_password]' } });
    await hostStore(host).flushed();
    // Every byte of the store file: the value was never written anywhere.
    expect(readFileSync(hostStore(host).path).includes(Buffer.from(SECRET))).toBe(false);
  });
});

describe('http.request through the broker', () => {
  it('reaches an origin the manifest and the policy both allow', async () => {
    const r = await script('b.http', {
      calls: [call('http.request', { url: `${origin}/hello` }), call('http.request', { url: 'http://127.0.0.2:9/x' })],
    });
    expect(r.answers[0]!.capability_result!.result).toMatchObject({ status: 200, body: 'hello from upstream' });
    expect(r.answers[1]!.error!.code).toBe('A-AUTH-HTTP-ORIGIN');
  });

  it('keeps the deadline running while a capability waits', async () => {
    const r = await script('b.http', { calls: [call('http.request', { url: `${origin}/hang` })] });
    // Either the capability gave up at the deadline and the guest returned, or the worker was
    // stopped; both end the call within the deadline with a timeout.
    const code = r.status === 'success' ? r.answers[0]!.error!.code : r.error!.code;
    expect(code).toBe('R-TIMEOUT-001');
    expect(r.metrics.duration_ms).toBeLessThan(5000);
  });
});

describe('helix verify', () => {
  it('reproduces a run with capability calls from its journal, byte for byte', async () => {
    const text = `>r1\n${'ACGT'.repeat(500)}\n`;
    const art = await importInline(hostStore(host), text);
    const r = await script('b.script', {
      calls: [
        call('clock.now_unix'),
        call('kv.put', { key: 'v', value: 1 }),
        call('kv.get', { key: 'v' }),
        call('artifact.read', { artifact_id: art.id, length: 100 }),
        call('log.emit', { event: 'done' }),
        call('nope.nope'),
      ],
    });
    expect(r.status).toBe('success');
    // The store moves on after the run; a verify still sees what the run saw.
    await script('b.script', { calls: [call('kv.put', { key: 'v', value: 2 })] });
    const report = await verifyRun(hostStore(host), r.run_id!);
    expect(report).toMatchObject({ run_id: r.run_id, match: true });
    expect(report.checks.every((c) => c.ok)).toBe(true);
  });

  it('reproduces a run that ended with a terminal capability_call', async () => {
    const r = await script('b.script', { terminal: call('clock.now_unix') });
    expect(r.status).toBe('success');
    expect((await verifyRun(hostStore(host), r.run_id!)).match).toBe(true);
  });

  it('detects a tampered journal entry, and a tampered entry whose chain was recomputed', async () => {
    const r = await script('b.script', { calls: [call('kv.get', { key: 'tamper' }), call('clock.now_unix')] });
    const journal = readJournal(hostStore(host), r.run_id!);
    const edited = { ...journal[1]!, result: { unix_ms: 1, unix_s: 0 } };
    await rawDatabases(hostStore(host)).journal.put([r.run_id!, 1], edited as never);
    const plain = await verifyRun(hostStore(host), r.run_id!);
    expect(plain.match).toBe(false);
    expect(plain.checks[0]).toMatchObject({ check: 'journal hash chain', ok: false });
    expect(plain.first_difference).toMatchObject({ seq: 1 });

    // A forger who also recomputes the hash and the run's head is caught when the answer is rebuilt.
    const { hash: _h, ...body } = edited;
    const hash = entryHash(journal[0]!.hash, body);
    await rawDatabases(hostStore(host)).journal.put([r.run_id!, 1], { ...edited, hash } as never);
    const run = getRun(hostStore(host), r.run_id!)!;
    await rawDatabases(hostStore(host)).runs.put(r.run_id!, { ...run, journal: { entries: 2, head: hash } });
    const forged = await verifyRun(hostStore(host), r.run_id!);
    expect(forged.match).toBe(false);
    expect(forged.first_difference).toMatchObject({ seq: 1, reason: expect.stringMatching(/does not hash to what the guest received/) });
  });

  it('refuses to verify a failed run or a built-in', async () => {
    const failed = await script('b.limited', { storm: 'clock.now_unix', n: 2 });
    await expect(verifyRun(hostStore(host), failed.run_id!)).rejects.toMatchObject({ code: 'P-PRECOND-VERIFY' });
  });
});
