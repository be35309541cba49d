// `helix store check` on a real store made by a real host (an AssemblyScript guest's kv, journal
// and written outputs, imports, a blocked run): clean passes, and each kind of damage planted
// in the LMDB file is found and named by its code, database and key, in-process and through
// the built CLI with its exit code.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { asBinary, type Database, type Key } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../abi/index.js';
import { importInline } from '../host/4-calls/artifacts/index.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost } from '../host/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { checkStore, type CheckReport } from '../host/3-store/check.js';
import { openStore, type Store, type StoreDatabaseName } from '../host/3-store/open-store.js';
import { rawDatabases } from '../host/3-store/raw-access.js';
import { compileGuest } from './helpers/as-guest.js';
import { ANY_OBJECT, toolpacksDir, tempDir } from './helpers/toolpack.js';

const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
const home = tempDir('helix-check-home-');
let plugins: { dir: string; cleanup: () => void };
let policyFile: string;
/** What the clean store holds, for planting damage. */
let big: { id: string; sha256: string; chunks: string[] };
let scriptRun: string;

function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: packageRoot(), maxBuffer: 1 << 26 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }),
    );
  });
}

const call = (name: string, args: Record<string, unknown>) => ({ name, args });
const limits = { maxInputBytes: 100_000, maxOutputBytes: 100_000, fuel: 5e9, maxMemoryPages: 256, maxCapabilityCalls: 100 };

beforeAll(async () => {
  const script = await compileGuest('script.ts');
  const inputSchema = { ...ANY_OBJECT, properties: { input: { type: 'string', 'x-helix-artifact': true } } };
  plugins = await toolpacksDir([
    {
      id: 'c.script',
      module: script,
      inputSchema,
      manifest: { limits, capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.get', 'clock.now_unix', 'log.emit', 'artifact.stat'] } },
    },
    {
      id: 'c.writer',
      module: script,
      manifest: { limits, capabilities: { abiVersion: 1, allow: ['artifact.write'] }, declaredOutputs: [{ role: 'report', type: 'text' }] },
    },
    { id: 'c.denied', module: script },
  ]);
  policyFile = path.join(plugins.dir, 'policy.yaml');
  writeFileSync(
    policyFile,
    ['version: 1', 'tools: { allow: ["c.script", "c.writer"] }', 'grants:', '  "*": ["clock.*", "log.*", "kv.*", "artifact.*"]', ''].join(
      '\n',
    ),
  );
  const host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
  try {
    const record = await importInline(hostStore(host), randomBytes(2_500_000), { label: 'three chunks', maxBytes: 1 << 30 });
    big = { id: record.id, sha256: record.sha256, chunks: [...rawDatabases(hostStore(host)).blobs.get(record.sha256)!.chunks] };
    const input = await importInline(hostStore(host), '>r1\nACGT\n', { label: 'input' });
    const r = await host.call({
      tool_id: 'c.script',
      input: {
        input: input.id,
        calls: [
          call('kv.put', { key: 'k', value: { n: 1 } }),
          call('kv.get', { key: 'k' }),
          call('clock.now_unix', {}),
          call('log.emit', { event: 'hello', fields: {} }),
        ],
      },
    });
    expect(r.status).toBe('success');
    scriptRun = r.run_id!;
    expect(getRun(hostStore(host), scriptRun)!.journal.entries).toBe(4);
    expect(
      (
        await host.call({
          tool_id: 'c.writer',
          input: { calls: [call('artifact.write', { role: 'report', data: 'done\n', final: true })] },
        })
      ).status,
    ).toBe('success');
    // Failed runs with an output never sealed and one sealed (of the wrong type), and a run the policy blocks (an audit record).
    expect(
      (await host.call({ tool_id: 'c.writer', input: { calls: [call('artifact.write', { role: 'report', data: 'half' })] } })).status,
    ).toBe('terminal_error');
    expect(
      (
        await host.call({
          tool_id: 'c.writer',
          input: { calls: [call('artifact.write', { role: 'report', data: '{"a":1}', type: 'json', final: true })] },
        })
      ).status,
    ).toBe('terminal_error');
    expect((await host.call({ tool_id: 'c.denied', input: {} })).error?.code).toBe('A-AUTH-TOOL-DENIED');
  } finally {
    await host.close();
  }
}, 180_000);
afterAll(() => {
  plugins?.cleanup();
  home.cleanup();
});

/** Opens the store, runs `body`, closes it. */
async function withStore<T>(body: (store: Store) => Promise<T> | T): Promise<T> {
  const store = openStore(home.dir);
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

/** Raw bytes that were under a key before damage was planted there (undefined: absent). */
interface Saved {
  readonly db: StoreDatabaseName;
  readonly key: Key;
  readonly bytes: Buffer | undefined;
}

const raw = (store: Store, db: StoreDatabaseName): Database<unknown, Key> => rawDatabases(store)[db] as unknown as Database<unknown, Key>;

/** Puts `value` (raw bytes, a record, or undefined to remove) under `key`; returns what was there. */
async function plant(store: Store, db: StoreDatabaseName, key: Key, value: Buffer | object | undefined): Promise<Saved> {
  const saved = { db, key, bytes: raw(store, db).getBinary(key) };
  if (value === undefined) await raw(store, db).remove(key);
  else await raw(store, db).put(key, Buffer.isBuffer(value) ? asBinary(value) : value);
  return saved;
}

/** Puts the saved bytes back. */
async function restore(store: Store, saved: readonly Saved[]): Promise<void> {
  for (const s of saved) await raw(store, s.db).put(s.key, asBinary(s.bytes!));
}

/** Plants damage, checks, restores the bytes, and checks clean again. */
async function planted(damage: (store: Store) => Promise<Saved[]>): Promise<CheckReport> {
  return withStore(async (store) => {
    const saved = await damage(store);
    const report = checkStore(store);
    await restore(store, saved);
    expect(checkStore(store).ok).toBe(true);
    return report;
  });
}

/** A chunk's bytes with one bit flipped at `at`. */
const flipped = (store: Store, key: string, at: number): Buffer => {
  const bytes = Buffer.from(rawDatabases(store).chunks.getBinary(key)!);
  bytes[at] = bytes[at]! ^ 0x01;
  return bytes;
};

const brief = (r: CheckReport) => r.problems.map((p) => ({ code: p.code, database: p.database, key: p.key }));

describe('helix store check', () => {
  it('helix store check passes a clean store of runs, artifacts, journals, kv and audit, exit 0 (ABI-STORE-060..065)', async () => {
    const text = await helix(['store', 'check', '--home', home.dir]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/store check: \d+ entries in 18 databases, [\d.]+ MiB re-hashed: clean\n$/);
    const json = await helix(['store', 'check', '--home', home.dir, '--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as CheckReport;
    expect(report).toMatchObject({ ok: true, problem_count: 0, problems: [] });
    for (const db of [
      'chunks',
      'blobs',
      'artifacts',
      'runs',
      'run_events',
      'run_journal',
      'kv',
      'audit',
      'modules',
      'param_sets',
      'policies',
    ])
      expect(report.checked[db], db).toBeGreaterThan(0);
    // Every writer ended its pending write, the failed run's unsealed output included (ABI-STORE-050).
    expect(report.checked.pending_writes).toBe(0);
  });

  it('store check finds a flipped byte in a chunk: the chunk and its blob, D-DATA-CHECKSUM (ABI-STORE-060, ABI-STORE-061)', async () => {
    const key = big.chunks[1]!;
    const report = await planted(async (store) => [await plant(store, 'chunks', key, flipped(store, key, 1000))]);
    expect(brief(report)).toEqual([
      { code: 'D-DATA-CHECKSUM', database: 'chunks', key },
      { code: 'D-DATA-CHECKSUM', database: 'blobs', key: big.sha256 },
    ]);
  });

  it('store check finds records that do not decode or do not parse, D-DATA-RECORD-INVALID (ABI-STORE-062)', async () => {
    const report = await planted(async (store) => [
      // Cut msgpack (an array of two holding one element) for the run; a wrong shape for an artifact.
      await plant(store, 'runs', scriptRun, Buffer.from([0x92, 0x01])),
      await plant(store, 'artifacts', big.id, { ...rawDatabases(store).artifacts.get(big.id)!, size: 'large' }),
    ]);
    expect(brief(report)).toEqual([
      { code: 'D-DATA-RECORD-INVALID', database: 'artifacts', key: big.id },
      { code: 'D-DATA-RECORD-INVALID', database: 'runs', key: scriptRun },
    ]);
    expect(report.problems[0]!.message).toMatch(/at size/);
  });

  it('store check finds a missing chunk, D-DATA-REFERENCE naming the blob (ABI-STORE-063)', async () => {
    const key = big.chunks[2]!;
    const report = await planted(async (store) => [await plant(store, 'chunks', key, undefined)]);
    expect(brief(report)).toEqual([{ code: 'D-DATA-REFERENCE', database: 'blobs', key: big.sha256 }]);
    expect(report.problems[0]!.message).toBe(`chunk 2 (${key}) is not in chunks`);
  });

  it('store check finds a broken journal chain, D-DATA-JOURNAL naming the run and the entry (ABI-STORE-064)', async () => {
    const report = await planted(async (store) => {
      const entry = rawDatabases(store).journal.get([scriptRun, 1]) as unknown as JournalEntry;
      // Still a valid entry, but not the one the chain was built from.
      return [await plant(store, 'journal', [scriptRun, 1], { ...entry, args: { key: 'edited' } })];
    });
    expect(brief(report)).toEqual([{ code: 'D-DATA-JOURNAL', database: 'run_journal', key: `${scriptRun}/1` }]);
    expect(report.problems[0]!.message).toMatch(/entry 1 does not match its hash/);
  });

  it('helix store check lists every planted problem with its code and exits 1; the host then serves a call (ABI-STORE-065)', {
    timeout: 180_000,
  }, async () => {
    const saved = await withStore(async (store) => {
      const entry = rawDatabases(store).journal.get([scriptRun, 0]) as unknown as JournalEntry;
      return [
        await plant(store, 'chunks', big.chunks[0]!, flipped(store, big.chunks[0]!, 0)),
        await plant(store, 'runs', scriptRun, Buffer.from([0xc1])),
        await plant(store, 'journal', [scriptRun, 0], { ...entry, fuel: entry.fuel + 1 }),
        await plant(store, 'chunks', big.chunks[2]!, undefined),
      ];
    });
    const text = await helix(['store', 'check', '--home', home.dir]);
    expect(text.code).toBe(1);
    expect(text.stderr).toBe('');
    expect(text.stdout).toContain(`D-DATA-CHECKSUM chunks ${big.chunks[0]}: `);
    expect(text.stdout).toContain(`D-DATA-REFERENCE blobs ${big.sha256}: chunk 2`);
    expect(text.stdout).toContain(`D-DATA-RECORD-INVALID runs ${scriptRun}: `);
    expect(text.stdout).toMatch(/: \d+ problems\n$/);
    const json = JSON.parse((await helix(['store', 'check', '--home', home.dir, '--json'])).stdout) as CheckReport;
    expect(json.ok).toBe(false);
    expect(new Set(json.problems.map((p) => p.code))).toEqual(new Set(['D-DATA-CHECKSUM', 'D-DATA-REFERENCE', 'D-DATA-RECORD-INVALID']));

    // With the run record readable again, its journal is re-chained: the edited entry breaks it.
    await withStore((store) => restore(store, [saved[1]!]));
    const withJournal = JSON.parse((await helix(['store', 'check', '--home', home.dir, '--json'])).stdout) as CheckReport;
    expect(withJournal.problems).toContainEqual(
      expect.objectContaining({ code: 'D-DATA-JOURNAL', database: 'run_journal', key: `${scriptRun}/0` }),
    );

    await withStore((store) => restore(store, saved));
    expect((await helix(['store', 'check', '--home', home.dir])).code).toBe(0);
    const host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
    try {
      expect((await host.call({ tool_id: 'c.script', input: { calls: [call('kv.get', { key: 'k' })] } })).status).toBe('success');
    } finally {
      await host.close();
    }
  });
});
