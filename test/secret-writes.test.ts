// Secrets stay secret (README "Security", the secrets row; ABI-SECRET-*) under the default rules: a real
// AssemblyScript guest reads a secret from the policy (env source) and tries every write path
// with the raw value and each covered encoding; what the store keeps never holds any form of it.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseEnvelope } from '../abi/index.js';
import { getArtifact } from '../host/4-calls/artifacts/index.js';
import { readJournal } from '../host/4-calls/broker/journal.js';
import { hostStore } from '../host/5-host/host.js';
import type { Host } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { readAudit } from '../host/3-store/audit.js';
import { readBlobBytes } from '../host/3-store/blobs.js';
import type { TestServer } from './helpers/http-test-kit.js';
import { call, formsIn, MARKER, SECRET, SECRET_KEY_FILE, startSecretHost, TEMPLATES, type SecretHost } from './helpers/secret-kit.js';

let h: SecretHost;
let host: Host;
let upstream: TestServer;
const guest = (tool: string, input: Record<string, unknown>) => h.guest(tool, input);

beforeAll(async () => {
  h = await startSecretHost();
  ({ host, upstream } = h);
}, 120_000);
afterAll(async () => h?.close());

/** The host survived: a well-behaved call in the same host succeeds. */
async function expectHostServes(): Promise<void> {
  expect(await h.serves()).toBe(true);
}

/** Every record the run left in the store, as one text: journal, audit, run record, log artifact. */
async function runRecords(runId: string): Promise<string> {
  const run = getRun(hostStore(host), runId)!;
  const log =
    run.log_artifact_id === null
      ? ''
      : (await readBlobBytes(hostStore(host), getArtifact(hostStore(host), run.log_artifact_id).sha256, 1e8)).toString();
  return JSON.stringify([readJournal(hostStore(host), runId), readAudit(hostStore(host)).filter((a) => a.run_id === runId), run]) + log;
}

describe('the secret guard under the default rules', () => {
  it('ABI-SECRET-003: kv.put refuses a key or value carrying the secret in each covered form, and stores none of them', async () => {
    const calls = TEMPLATES.flatMap(([, t], i) => [
      call('kv.put', { key: `value-${i}`, value: { note: `x ${t} y` } }),
      call('kv.put', { key: `key-${i}-${t}`, value: i }),
    ]);
    const r = await guest('s.paths', { secret: 'db_password', calls: [...calls, call('kv.list', { prefix: '' })] });
    expect(r.status).toBe('success');
    for (const [i, [label]] of TEMPLATES.entries()) {
      const [onValue, onKey] = [r.answers[2 * i]!, r.answers[2 * i + 1]!];
      expect(onValue.error, label).toMatchObject({
        code: 'A-AUTH-SECRET-WRITE',
        details: { secret: 'db_password', where: 'kv.put', path: '/value/note', rule: 'secretWrites.kv' },
      });
      expect(onKey.error, label).toMatchObject({ code: 'A-AUTH-SECRET-WRITE', details: { path: '/key' } });
      expect(onValue.error!.message).not.toContain(SECRET);
    }
    expect(r.answers.at(-1)!.capability_result!.result).toEqual({ keys: [] });
    expect(formsIn(await runRecords(r.run_id!))).toEqual([]);
    expect(readAudit(hostStore(host)).filter((a) => a.run_id === r.run_id && a.decision === 'refused')).toHaveLength(2 * TEMPLATES.length);
    await expectHostServes();
  });

  it('ABI-SECRET-005/006/007: log lines, the output, the journal, the audit and the run log keep the marker in place of every form', async () => {
    const fields = Object.fromEntries(TEMPLATES.map(([label, t]) => [`${label} ${t}`, `before ${t} after`]));
    const echo = TEMPLATES.map(([, t]) => t).join(' ');
    const r = await guest('s.paths', { secret: 'db_password', calls: [call('log.emit', { event: 'leak', fields })], output: echo });
    expect(r.status).toBe('success');
    expect(r.answers[0]).toMatchObject({ status: 'ok' });
    const output = JSON.stringify(r.output);
    expect(formsIn(output)).toEqual([]);
    expect(output.split(MARKER).length - 1).toBeGreaterThanOrEqual(TEMPLATES.length);
    const records = await runRecords(r.run_id!);
    expect(formsIn(records)).toEqual([]);
    const line = readAudit(hostStore(host)).find((a) => a.kind === 'log' && a.run_id === r.run_id)!;
    expect(Object.keys(line.fields as object).every((k) => k.includes(MARKER))).toBe(true);
    await expectHostServes();
  });

  it("ABI-SECRET-007: a guest error's message is redacted in the response and the records", async () => {
    const r = await guest('s.paths', { secret: 'db_password', error: 'failed on {{b64|a}} and {{hex}}' });
    expect(r.status).toBe('terminal_error');
    expect(r.error!.message).toMatch(/^failed on .*\[secret:db_password\].* and \[secret:db_password\]$/);
    expect(formsIn(JSON.stringify(r))).toEqual([]);
    expect(formsIn(await runRecords(r.run_id!))).toEqual([]);
    await expectHostServes();
  });

  it('ABI-SECRET-004: artifact.write refuses a piece that completes the secret across two pieces, and the role with it', async () => {
    // These runs fail (their one declared output was refused), so the answers are read from the journal.
    const answers = (r: ResponseEnvelope) =>
      readJournal(hostStore(host), r.run_id!)
        .slice(1)
        .map((e) => e.error ?? e.outcome);
    const split = await guest('s.writer', {
      secret: 'db_password',
      calls: [
        call('artifact.write', { role: 'report', data: 'head {{raw|||0|9}}' }),
        call('artifact.write', { role: 'report', data: '{{raw|||9|}} tail', final: true }),
        call('artifact.write', { role: 'report', data: 'more', final: true }),
      ],
    });
    const [first, second, third] = answers(split);
    expect(first).toBe('ok');
    expect(second).toMatchObject({
      code: 'A-AUTH-SECRET-WRITE',
      details: { secret: 'db_password', where: 'artifact.write', path: '/data', role: 'report', encoding: 'raw' },
    });
    expect(third).toMatchObject({ code: 'A-AUTH-SECRET-WRITE', details: { refused_before: true } });
    expect(split.error).toMatchObject({
      code: 'C-CONTRACT-DECLARED-OUTPUTS',
      details: { problems: ['role report was refused: it carried the value of secret db_password'] },
    });
    const encoded = await guest('s.writer', {
      secret: 'db_password',
      calls: [call('artifact.write', { role: 'report', data: '{{b64|xy|z}}', encoding: 'base64', final: true })],
    });
    expect(answers(encoded)[0]).toMatchObject({ code: 'A-AUTH-SECRET-WRITE', details: { encoding: 'raw' } });
    const hexText = await guest('s.writer', {
      secret: 'db_password',
      calls: [
        call('artifact.write', { role: 'report', data: 'a {{hex||||20}}' }),
        call('artifact.write', { role: 'report', data: '{{hex|||20|}} b', final: true }),
      ],
    });
    expect(answers(hexText)).toMatchObject(['ok', { code: 'A-AUTH-SECRET-WRITE', details: { encoding: 'hex' } }]);
    const label = await guest('s.writer', {
      secret: 'db_password',
      calls: [call('artifact.write', { role: 'report', data: 'fine', label: 'by {{b64url|a}}', final: true })],
    });
    expect(answers(label)[0]).toMatchObject({ code: 'A-AUTH-SECRET-WRITE', details: { path: '/label' } });
    for (const r of [split, encoded, hexText, label]) {
      expect(r.status).toBe('terminal_error');
      expect(formsIn(await runRecords(r.run_id!))).toEqual([]);
    }
    // The journal keeps a piece's length, not its bytes, so no half of the secret is journaled either.
    expect(readJournal(hostStore(host), split.run_id!)[1]!.args).toEqual({ role: 'report', data_length: 'head '.length + 9 });
    await hostStore(host).flushed();
    // The first piece's tail was held back, never written: not even the secret's first half is stored.
    expect(readFileSync(hostStore(host).path).includes(Buffer.from(`head ${SECRET.slice(0, 9)}`))).toBe(false);
    await expectHostServes();
  });

  it('ABI-SECRET-010: http.request carries the secret to the allowed origin; its journal keeps no form of it', async () => {
    const r = await guest('s.paths', {
      secret: 'db_password',
      calls: [
        call('http.request', {
          method: 'POST',
          url: `${upstream.origin}/login?token={{pct}}`,
          headers: { authorization: 'Basic {{b64|user:}}' },
          body: '{"password":"{{json}}"}',
        }),
      ],
    });
    expect(r.answers[0]).toMatchObject({ status: 'ok', capability_result: { result: { status: 200 } } });
    const hit = upstream.hits.at(-1)!;
    expect(hit.headers.authorization).toBe(`Basic ${Buffer.from(`user:${SECRET}`).toString('base64')}`);
    expect(new URL(hit.url, upstream.origin).searchParams.get('token')).toBe(SECRET);
    expect(JSON.parse(hit.body.toString()).password).toBe(SECRET);
    const journal = readJournal(hostStore(host), r.run_id!);
    expect(JSON.stringify(journal[1]!.args)).toContain(MARKER);
    expect(formsIn(await runRecords(r.run_id!))).toEqual([]);
    await expectHostServes();
  });

  it('ABI-SECRET-008: every journal hash from the secret on is keyed; the plain sha256 of the answer is nowhere', async () => {
    const r = await guest('s.paths', { secret: 'db_password', calls: [call('kv.get', { key: 'nothing' })] });
    const journal = readJournal(hostStore(host), r.run_id!);
    expect(journal.map((e) => [e.name, e.mode, e.keyed])).toEqual([
      ['secrets.get', 'redacted', true],
      ['kv.get', 'value', true],
    ]);
    const answer = JSON.stringify({ status: 'ok', abi_version: 1, capability_result: { name: 'secrets.get', result: { value: SECRET } } });
    const { createHash } = await import('node:crypto');
    const plain = [answer, SECRET].map((t) => createHash('sha256').update(t).digest('hex'));
    await hostStore(host).flushed();
    const file = readFileSync(hostStore(host).path);
    for (const h of plain) expect(file.includes(Buffer.from(h))).toBe(false);
    expect(journal[0]!.response_sha256).not.toBe(plain[0]);
    const key = path.join(h.home, SECRET_KEY_FILE);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(file.includes(readFileSync(key, 'utf8').trim())).toBe(false);
    await expectHostServes();
  });

  it('ABI-SECRET-001: no form of the secret is anywhere in the store file after every path was tried', async () => {
    await hostStore(host).flushed();
    expect(formsIn(readFileSync(hostStore(host).path))).toEqual([]);
  });
});
