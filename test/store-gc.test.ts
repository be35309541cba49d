// `helix gc` against real processes on a real LMDB file: an import SIGKILLed halfway leaves
// orphans that gc reclaims (the file's free space, its reuse and its compaction measured and
// printed), gc looping beside a live import in another process never breaks it, and
// compaction waits for `helix serve` to let go of the store.
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import type { CheckReport } from '../host/3-store/check.js';
import type { CompactReport } from '../host/3-store/compact.js';
import { collectGarbage, type GcReport } from '../host/3-store/gc.js';
import { openStore } from '../host/3-store/open-store.js';
import { CLI, serveWithClient } from './fixtures/mcp/serve.js';
import { tempDir } from './helpers/toolpack.js';

const MIB = 1 << 20;
const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;
let t: { dir: string; cleanup: () => void };
let data: string;
let policy: string;

function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: packageRoot(), maxBuffer: 1 << 26 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }),
    );
  });
}

/** A file of `n` MiB whose every MiB differs (no chunk deduplicates against another). */
function bigFile(name: string, n: number): string {
  const file = path.join(data, name);
  const fd = openSync(file, 'w');
  const block = randomBytes(MIB);
  for (let i = 0; i < n; i++) {
    block.writeUInt32BE(i, 0);
    writeSync(fd, block);
  }
  closeSync(fd);
  return file;
}

const sha256File = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');
const storeFile = (home: string): string => path.join(home, 'helix.mdb');
const fileSize = (home: string): number => {
  try {
    return statSync(storeFile(home)).size;
  } catch {
    return 0;
  }
};

/** Starts `helix artifact import file` and SIGKILLs it once the store file passes `killAt` bytes. */
async function killedImport(home: string, file: string, killAt: number): Promise<void> {
  const child = spawn(process.execPath, [CLI, 'artifact', 'import', file, '--home', home, '--policy', policy], {
    cwd: packageRoot(),
    stdio: 'ignore',
  });
  const exited = new Promise<string | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  while (child.exitCode === null && fileSize(home) < killAt) await new Promise((r) => setTimeout(r, 5));
  child.kill('SIGKILL');
  // Killed in the middle, not after it finished.
  expect(await exited).toBe('SIGKILL');
}

beforeAll(() => {
  t = tempDir('helix-gc-cli-');
  const root = realpathSync(t.dir);
  data = path.join(root, 'data');
  mkdirSync(data);
  policy = path.join(root, 'policy.yaml');
  writeFileSync(
    policy,
    `version: 1\ntools:\n  allow: ["*"]\nceilings:\n  maxImportBytes: 1000000000\npaths:\n  importRoots: [${JSON.stringify(data)}]\n  exportRoots: [${JSON.stringify(root)}]\n`,
  );
});
afterAll(() => t?.cleanup());

describe('helix gc', () => {
  it('helix gc reclaims the chunks of an import SIGKILLed halfway; later writes reuse the pages and --compact shrinks the file (ABI-STORE-052, ABI-STORE-055, ABI-STORE-056)', {
    timeout: 300_000,
  }, async () => {
    const home = path.join(t.dir, 'killed');
    await killedImport(home, bigFile('killed.bin', 160), 48 * MIB);
    const killedSize = fileSize(home);
    expect(JSON.parse((await helix(['artifact', 'list', '--json', '--home', home])).stdout)).toEqual([]);
    // Orphans are not damage: check passes and says what gc will take.
    const check = await helix(['store', 'check', '--home', home]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/note: 1 pending write of a process that died hold chunks no artifact uses/);

    const dry = JSON.parse((await helix(['gc', '--dry-run', '--json', '--home', home])).stdout) as GcReport;
    expect(dry.removed.chunks).toBeGreaterThanOrEqual(40);
    const ran = await helix(['gc', '--json', '--home', home]);
    expect(ran.code).toBe(0);
    const gc = JSON.parse(ran.stdout) as GcReport;
    expect(gc.removed).toEqual(dry.removed);
    expect(gc.removed).toMatchObject({ chunk_bytes: gc.removed.chunks * MIB, blobs: 0, pending_writes: 1 });
    const freed = gc.space_after.free_bytes - gc.space_before.free_bytes;
    expect(freed).toBeGreaterThanOrEqual(gc.removed.chunk_bytes);
    // The file does not shrink; gc's own commit adds the free list's pages (8 bytes per page freed).
    expect(gc.space_after.file_bytes - gc.space_before.file_bytes).toBeLessThan(MIB);
    expect((JSON.parse((await helix(['gc', '--json', '--home', home])).stdout) as GcReport).removed.chunks).toBe(0);

    // The freed pages take the next import: without reuse the file would grow by the 32 MiB
    // imported. The first commit after gc cannot reuse them yet (LMDB keeps the pages of the last
    // commit for its other meta page), so a megabyte or two is appended.
    const next = bigFile('next.bin', 32);
    const imported = await helix(['artifact', 'import', next, '--home', home, '--policy', policy]);
    expect(imported.code).toBe(0);
    const afterImport = fileSize(home);
    expect(afterImport - gc.space_after.file_bytes).toBeLessThan(8 * MIB);

    const compacted = await helix(['gc', '--compact', '--json', '--home', home]);
    expect(compacted.code).toBe(0);
    const compaction = (JSON.parse(compacted.stdout) as { compaction: CompactReport }).compaction;
    expect(compaction.file_bytes_before).toBe(afterImport);
    expect(compaction.file_bytes_after).toBeLessThan(36 * MIB);
    console.log(
      [
        `killed import: store file ${mib(killedSize)}, ${gc.removed.chunks} orphan chunks (${mib(gc.removed.chunk_bytes)}), no artifact`,
        `after gc: file ${mib(gc.space_after.file_bytes)}, free ${mib(gc.space_before.free_bytes)} -> ${mib(gc.space_after.free_bytes)}`,
        `after a 32 MiB import: file ${mib(afterImport)} (+${mib(afterImport - gc.space_after.file_bytes)})`,
        `after gc --compact: file ${mib(compaction.file_bytes_before)} -> ${mib(compaction.file_bytes_after)}`,
      ].join('\n'),
    );

    const id = (JSON.parse(imported.stdout) as { id: string }).id;
    const out = path.join(t.dir, 'next.out');
    expect((await helix(['artifact', 'export', id, out, '--home', home, '--policy', policy])).code).toBe(0);
    expect(sha256File(out)).toBe(sha256File(next));
    expect((await helix(['store', 'check', '--home', home])).code).toBe(0);
    // The host still serves a call on the collected and compacted store.
    expect((await helix(['call', 'seq.gc_content', '--input', '{"sequence":"GATTACA"}', '--home', home])).code).toBe(0);
  });

  it('gc looping beside a live import in another process never breaks it, even where it deduplicates against orphans (ABI-STORE-050, ABI-STORE-053)', {
    timeout: 300_000,
  }, async () => {
    const home = path.join(t.dir, 'concurrent');
    const file = bigFile('shared.bin', 96);
    // Orphans holding the file's first chunks, which the next import finds and does not rewrite.
    await killedImport(home, file, 24 * MIB);
    const child = spawn(process.execPath, [CLI, 'artifact', 'import', file, '--home', home, '--policy', policy], {
      cwd: packageRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const store = openStore(home);
    let runs = 0;
    let besideLive = 0;
    try {
      while (child.exitCode === null) {
        const report = await collectGarbage(store);
        runs++;
        if (report.kept.live_pending_writes > 0) besideLive++;
        // Store writes commit on the calling thread (ABI-STORE-002), so collectGarbage settles
        // at once: give the event loop a turn to see the child's exit.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await store.close();
    }
    expect(await exited, stderr).toBe(0);
    console.log(`gc ran ${runs} times during the import, ${besideLive} of them beside its live pending write`);
    expect(besideLive).toBeGreaterThan(0);
    const record = JSON.parse(stdout) as { id: string; sha256: string };
    expect(record.sha256).toBe(sha256File(file));
    const out = path.join(t.dir, 'shared.out');
    // Export reads every chunk back hash-checked.
    const exported = await helix(['artifact', 'export', record.id, out, '--home', home, '--policy', policy]);
    expect(exported.stderr).toBe('');
    expect(sha256File(out)).toBe(record.sha256);
    const check = JSON.parse((await helix(['store', 'check', '--json', '--home', home])).stdout) as CheckReport;
    expect(check).toMatchObject({ ok: true, problem_count: 0 });
  });

  it('helix gc --compact is refused while helix serve has the store open, and the server keeps serving (ABI-STORE-056)', {
    timeout: 180_000,
  }, async () => {
    const home = path.join(t.dir, 'served');
    const served = await serveWithClient(['--home', home]);
    try {
      const { tools } = await served.client.listTools();
      const gcContent = tools.find((tool) => tool.name.includes('gc_content'))!.name;
      const refused = await helix(['gc', '--compact', '--json', '--home', home]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^helix: P-PRECOND-STORE-BUSY: The store in .* is open in process \d+ \(before the copy\), so it cannot be compacted now\.\nhint: /,
      );
      // The gc itself ran alongside the server; only the compaction waited.
      expect(JSON.parse(refused.stdout)).toMatchObject({ dry_run: false, removed: { chunks: 0 } });
      const result = (await served.client.callTool({ name: gcContent, arguments: { sequence: 'GATTACA' } })) as CallToolResult;
      expect(result.isError).not.toBe(true);
    } finally {
      await served.close();
    }
    const alone = await helix(['gc', '--compact', '--json', '--home', home]);
    expect(alone.code).toBe(0);
    expect(JSON.parse(alone.stdout)).toHaveProperty('compaction.file_bytes_after');
  });
});
