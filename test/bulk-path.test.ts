// The bulk path (capability ABI 2, ABI-BULK-*) end to end: a real AssemblyScript guest on the
// SDK's artifactReadInto/artifactWriteFrom and WAT guests that call capability_call_bulk
// directly, against the real broker, workers, LMDB store and `helix verify`.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { importInline } from '../host/4-calls/artifacts/index.js';
import { readJournal } from '../host/4-calls/broker/journal.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost, type Host } from '../host/index.js';
import { verifyRun } from '../host/4-calls/runs/verify.js';
import { readBlobBytes } from '../host/3-store/blobs.js';
import { rawDatabases } from '../host/3-store/raw-access.js';
import { getArtifact } from '../host/4-calls/artifacts/index.js';
import { compileGuest } from './helpers/as-guest.js';
import { bulkCallModule, rawBulkInput } from './helpers/bulk-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { wat2wasm } from './helpers/wat.js';

const MiB = 1 << 20;
const limits = { maxInputBytes: 1_000_000, maxOutputBytes: 1_000_000, fuel: 5e10, maxMemoryPages: 1024, maxCapabilityCalls: 10_000 };
const home = tempDir('helix-home-');
let host: Host;
let plugins: { dir: string; cleanup: () => void };

beforeAll(async () => {
  const copy = await compileGuest('bulk-copy.ts');
  const raw = await wat2wasm(bulkCallModule(), 'bulk-call.wat');
  const bulk2 = { abiVersion: 2 as const, allow: ['artifact.read', 'artifact.write'] };
  plugins = await toolpacksDir([
    {
      id: 'bulk.copy',
      module: copy,
      manifest: { limits, capabilities: bulk2, declaredOutputs: [{ role: 'copy', type: 'binary', label: 'a copy' }] },
    },
    { id: 'bulk.read', module: copy, manifest: { limits, capabilities: bulk2 } },
    {
      id: 'bulk.raw',
      module: raw,
      manifest: { limits, capabilities: { abiVersion: 2, allow: ['artifact.read', 'artifact.write', 'clock.now_unix'] } },
    },
  ]);
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  writeFileSync(policyFile, ['version: 1', 'tools: { allow: ["*"] }', 'grants:', '  "*": ["clock.*", "artifact.*"]', ''].join('\n'));
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
}, 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

/** What the bulk test guest answers: its counts and written artifact, or the raw answer to the call it made. */
interface BulkOut {
  bytes?: number;
  sum?: number;
  artifact_id: string;
  answer: {
    status: string;
    abi_version: number;
    error: { code: string; message: string; details: { violations: Array<{ message: string }> } };
  };
}

async function call(tool: string, input: Record<string, unknown>): Promise<ResponseEnvelope & { out: BulkOut }> {
  const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input }));
  return { ...r, out: r.output as BulkOut };
}

async function stored(bytes: Uint8Array, type = 'binary'): Promise<string> {
  return (await importInline(hostStore(host), bytes, { type })).id;
}

const sum = (bytes: Uint8Array): number => bytes.reduce((a, b) => a + b, 0);

describe('bulk reads and writes through the SDK', () => {
  it('copies binary, non-UTF-8 bytes exactly, across chunk boundaries, to the end', async () => {
    // 2.5 chunks of random bytes (invalid UTF-8 throughout), read in pieces that straddle chunks.
    const bytes = new Uint8Array(randomBytes(2 * MiB + MiB / 2 + 17));
    const id = await stored(bytes);
    for (const piece of [MiB, 3 * MiB + 5, 65_537]) {
      const r = await call('bulk.copy', { artifact_id: id, piece, copy: true });
      expect(r.status, JSON.stringify(r.error)).toBe('success');
      expect(r.out).toMatchObject({ bytes: bytes.length, sum: sum(bytes) });
      const copy = getArtifact(hostStore(host), r.out.artifact_id);
      expect(copy.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });

  it('reads the gunzipped content of a gzip artifact', async () => {
    const text = new TextEncoder().encode('@r1\nACGT\n+\nIIII\n'.repeat(100_000));
    const id = await stored(gzipSync(text), 'fastq');
    const r = await call('bulk.read', { artifact_id: id, piece: MiB, decompress: true });
    expect(r.status, JSON.stringify(r.error)).toBe('success');
    expect(r.out).toMatchObject({ bytes: text.length, sum: sum(text) });
  });

  it('journals each piece by its data_sha256, the chunk key for a whole chunk, and verify passes', async () => {
    const bytes = new Uint8Array(randomBytes(2 * MiB + 3));
    const id = await stored(bytes);
    const r = await call('bulk.copy', { artifact_id: id, piece: MiB, copy: true });
    expect(r.status).toBe('success');
    const journal = readJournal(hostStore(host), r.run_id!);
    const reads = journal.filter((e) => e.name === 'artifact.read');
    const chunk = (i: number) =>
      createHash('sha256')
        .update(bytes.subarray(i * MiB, (i + 1) * MiB))
        .digest('hex');
    expect(reads.map((e) => e.data_sha256)).toEqual([chunk(0), chunk(1), chunk(2)]);
    expect(reads[0]).toMatchObject({
      mode: 'value',
      result: { bytes: MiB, offset: 0, next_offset: MiB, eof: false },
      result_sha256: null,
      args: { artifact_id: id, offset: 0, decompress: false },
    });
    const writes = journal.filter((e) => e.name === 'artifact.write');
    expect(writes[0]).toMatchObject({ args: { role: 'copy', final: false, type: 'binary' }, data_sha256: chunk(0) });
    const report = await verifyRun(hostStore(host), r.run_id!);
    expect(report.match, JSON.stringify(report)).toBe(true);
  });
});

describe('the bulk import refuses', () => {
  it.each([
    ['outside memory', 4 * 65_536 - 8, 16, 'S-TOOL-BAD-POINTER'],
    ['wrapping past 2^32', 0xfffffff0, 0x20, 'S-TOOL-BAD-POINTER'],
    ['a buffer above BULK_MAX_PIECE', 0, 4 * MiB + 1, 'S-TOOL-BULK-BUFFER'],
  ])('%s, before anything is read or journaled', async (_what, ptr, len, code) => {
    const id = await stored(new Uint8Array(16));
    const r = await call('bulk.raw', rawBulkInput({ abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, ptr, len));
    expect(r.status).toBe('terminal_error');
    expect(r.error?.code).toBe(code);
    expect(readJournal(hostStore(host), r.run_id!)).toEqual([]);
  });

  it('a length above the buffer, answered before any read; the guest goes on', async () => {
    const id = await stored(new Uint8Array(64));
    const r = await call(
      'bulk.raw',
      rawBulkInput({ abi_version: 2, name: 'artifact.read', args: { artifact_id: id, length: 33 } }, 131_072, 32),
    );
    expect(r.status).toBe('success');
    expect(r.out.answer).toMatchObject({
      status: 'error',
      abi_version: 2,
      error: { code: 'I-REQ-CAPABILITY-ARGS', details: { violations: [{ path: '/length' }] } },
    });
    expect(r.out.answer.error.details.violations[0]?.message).toMatch(/at most the buffer length \(32\)/);
  });

  it('a capability that is not bulk, with an error the guest can go on from', async () => {
    const r = await call('bulk.raw', rawBulkInput({ abi_version: 2, name: 'clock.now_unix', args: {} }, 131_072, 32));
    expect(r.status).toBe('success');
    expect(r.out.answer).toMatchObject({ status: 'error', abi_version: 2, error: { code: 'I-REQ-BULK-CAPABILITY' } });
    expect(r.out.answer.error.message).toMatch(/clock\.now_unix is not served through capability_call_bulk/);
  });
});

describe('fuel and the text path', () => {
  it('charges 1000 per call plus one per 64 bytes of request, answer and bulk bytes', async () => {
    const id = await stored(new Uint8Array(randomBytes(10_000)));
    const r = await call('bulk.raw', rawBulkInput({ abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, 131_072, 6400));
    expect(r.status).toBe('success');
    const [entry] = readJournal(hostStore(host), r.run_id!);
    const request = JSON.stringify({ abi_version: 2, name: 'artifact.read', args: { artifact_id: id } });
    const answer = JSON.stringify({
      status: 'ok',
      abi_version: 2,
      capability_result: { name: 'artifact.read', result: { bytes: 6400, offset: 0, next_offset: 6400, eof: false } },
    });
    expect(entry!.fuel).toBe(1000 + Math.ceil((request.length + answer.length + 6400) / 64));
  });

  it('a text artifact.read from an ABI 2 module is answered as before', async () => {
    const id = await stored(new TextEncoder().encode('héllo'));
    const r = await call('bulk.raw', rawBulkInput({ abi_version: 1, name: 'artifact.read', args: { artifact_id: id } }, 0, 0, true));
    expect(r.status).toBe('success');
    expect(r.out.answer).toEqual({
      status: 'ok',
      abi_version: 1,
      capability_result: { name: 'artifact.read', result: { data: 'héllo', encoding: 'utf8', offset: 0, next_offset: 6, eof: true } },
    });
  });
});

describe('helix verify under bulk reads', () => {
  it('catches a blob tampered with after the run', async () => {
    const bytes = new Uint8Array(randomBytes(MiB + 100));
    const id = await stored(bytes);
    const r = await call('bulk.read', { artifact_id: id, piece: MiB });
    expect(r.status).toBe('success');
    expect((await verifyRun(hostStore(host), r.run_id!)).match).toBe(true);
    // A flipped byte in the first stored chunk, as a failing disk would leave it.
    const key = createHash('sha256').update(bytes.subarray(0, MiB)).digest('hex');
    const chunks = rawDatabases(hostStore(host)).chunks;
    const damaged = Buffer.from(chunks.get(key) as Buffer);
    damaged[5] = damaged[5]! ^ 0xff;
    await chunks.put(key, damaged);
    const report = await verifyRun(hostStore(host), r.run_id!);
    expect(report.match).toBe(false);
    expect(JSON.stringify(report.first_difference)).toMatch(/artifact\.read (could not be answered again|now returns different bytes)/);
    await expect(readBlobBytes(hostStore(host), getArtifact(hostStore(host), id).sha256, 1 << 30)).rejects.toThrow(/does not match/);
  });
});
