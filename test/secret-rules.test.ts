// Secrets under the other rules of the policy's secretWrites (ABI-SECRET-003..006): kv and
// artifacts redact, log lines and the output refuse; and helix verify of a run that received a
// secret, whose journal hashes are keyed with the store's key (ABI-SECRET-008/009).
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getArtifact } from '../host/4-calls/artifacts/index.js';
import { hostStore } from '../host/5-host/host.js';
import type { Host } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { verifyRun } from '../host/4-calls/runs/verify.js';
import { readBlobBytes } from '../host/3-store/blobs.js';
import { kvGet } from '../host/3-store/kv.js';
import { call, formsIn, MARKER, SECRET_KEY_FILE, startSecretHost, type SecretHost } from './helpers/secret-kit.js';

let h: SecretHost;
let host: Host;
const guest = (tool: string, input: Record<string, unknown>) => h.guest(tool, input);

beforeAll(async () => {
  h = await startSecretHost('{ kv: redact, artifacts: redact, log: refuse, output: refuse }');
  host = h.host;
}, 120_000);
afterAll(async () => h?.close());

async function expectHostServes(): Promise<void> {
  expect(await h.serves()).toBe(true);
}

describe('secretWrites: redact for kv and artifacts', () => {
  it('ABI-SECRET-003: kv.put stores the key and value with the marker in place of the secret', async () => {
    const r = await guest('s.paths', {
      secret: 'db_password',
      calls: [call('kv.put', { key: 'k {{hex}}', value: { note: 'x {{b64|a}} y', '{{pct}}': 1 } }), call('kv.list', { prefix: 'k ' })],
    });
    expect(r.answers[0]).toMatchObject({ status: 'ok' });
    expect(r.answers[1]!.capability_result!.result).toEqual({ keys: [`k ${MARKER}`] });
    const stored = kvGet(hostStore(host), 's.paths', `k ${MARKER}`) as { note: string };
    expect(stored).toEqual({ note: expect.stringContaining(MARKER), [MARKER]: 1 });
    expect(formsIn(JSON.stringify(stored))).toEqual([]);
    await expectHostServes();
  });

  it('ABI-SECRET-004: artifact pieces are stored redacted, also across pieces, and the preview shows the marker', async () => {
    const r = await guest('s.writer', {
      secret: 'db_password',
      calls: [
        call('artifact.write', { role: 'report', data: 'line 1 {{raw|||0|7}}', label: 'for {{json}}' }),
        call('artifact.write', { role: 'report', data: '{{raw|||7|}}\nline 2 {{b64url|ab}}\n' }),
        call('artifact.write', { role: 'report', data: '{{b64|xy|\n}}', encoding: 'base64', final: true }),
      ],
    });
    expect(r.status).toBe('success');
    const artifact = getArtifact(hostStore(host), getRun(hostStore(host), r.run_id!)!.outputs[0]!.artifact_id);
    const bytes = await readBlobBytes(hostStore(host), artifact.sha256, 1e6);
    const [one, two, three, end] = bytes.toString().split('\n');
    expect([one, three, end]).toEqual([`line 1 ${MARKER}`, `xy${MARKER}`, '']);
    expect(two).toMatch(/^line 2 .{0,3}\[secret:db_password\].{0,3}$/);
    expect(formsIn(bytes)).toEqual([]);
    expect(artifact.preview.text).toContain(MARKER);
    expect(artifact.label).toBe(`for ${MARKER}`);
    expect(formsIn(JSON.stringify(artifact))).toEqual([]);
    await expectHostServes();
  });
});

describe('secretWrites: refuse for log lines and the output', () => {
  it('ABI-SECRET-005: log.emit refuses a line carrying the secret; the guest goes on', async () => {
    const r = await guest('s.paths', {
      secret: 'db_password',
      calls: [call('log.emit', { event: 'e', fields: { token: 'Bearer {{b64}}' } }), call('log.emit', { event: 'fine' })],
    });
    expect(r.status).toBe('success');
    expect(r.answers[0]!.error).toMatchObject({
      code: 'A-AUTH-SECRET-WRITE',
      details: { where: 'log.emit', path: '/fields/token', rule: 'secretWrites.log' },
    });
    expect(r.answers[1]).toMatchObject({ status: 'ok' });
    await expectHostServes();
  });

  it('ABI-SECRET-006: an output carrying the secret ends the run with A-AUTH-SECRET-WRITE and is not recorded', async () => {
    const r = await guest('s.paths', { secret: 'db_password', output: 'here: {{HEX}}' });
    expect(r).toMatchObject({
      status: 'terminal_error',
      error: { code: 'A-AUTH-SECRET-WRITE', details: { where: 'output', path: '/output/echo', encoding: 'hex-upper' } },
    });
    const run = getRun(hostStore(host), r.run_id!)!;
    expect(run).toMatchObject({ status: 'failed', output_sha256: null });
    expect(formsIn(JSON.stringify(run))).toEqual([]);
    await expectHostServes();
  });
});

describe('helix verify of a run that received a secret', () => {
  it('ABI-SECRET-009: reproduces the run with the store key and the secret from its source', async () => {
    const r = await guest('s.paths', { secret: 'db_password', calls: [call('kv.get', { key: 'x' })], output: 'no secret here' });
    expect(r.status).toBe('success');
    expect(await verifyRun(hostStore(host), r.run_id!)).toMatchObject({ match: true });
  });

  it('ABI-SECRET-008/009: the hashes are keyed: another key does not reproduce them, and no key refuses to verify', async () => {
    const r = await guest('s.paths', { secret: 'db_password', calls: [call('kv.get', { key: 'y' })] });
    const keyFile = path.join(h.home, SECRET_KEY_FILE);
    const saved = `${keyFile}.saved`;
    copyFileSync(keyFile, saved);
    try {
      writeFileSync(keyFile, `${'ab'.repeat(32)}\n`);
      const other = await verifyRun(hostStore(host), r.run_id!);
      expect(other.match).toBe(false);
      expect(other.first_difference).toMatchObject({ seq: 0 });
      rmSync(keyFile);
      await expect(verifyRun(hostStore(host), r.run_id!)).rejects.toMatchObject({
        code: 'P-PRECOND-VERIFY',
        message: expect.stringContaining('secret hash key'),
      });
    } finally {
      copyFileSync(saved, keyFile);
      rmSync(saved);
    }
    expect((await verifyRun(hostStore(host), r.run_id!)).match).toBe(true);
    await expectHostServes();
  });

  it('ABI-SECRET-001: no form of the secret is anywhere in the store file', async () => {
    await hostStore(host).flushed();
    expect(formsIn(readFileSync(hostStore(host).path))).toEqual([]);
  });
});
