// Helpers of the store checks (conformance/checks/store/): the built `helix` CLI as a child
// process with a bound on every wait, stores made by real hosts in homes of the check's own,
// damage planted in the LMDB file or in its records (through the store's diagnostic face,
// host/3-store/diagnostics.ts), and the evidence a reviewer reads (exit codes, stderr, store check
// reports).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { packageRoot } from '../../host/1-base/paths.js';
import { openRecords, type StoreRecords } from '../../host/5-host/host-records.js';
import { openDiagnostics, type CheckReport, type StoreDiagnostics } from '../../host/5-host/store-upkeep.js';
import { loadPolicy } from '../../host/5-host/toolpacks.js';
import { CheckFailure, expect, type CheckContext } from '../check.js';
import { checkDefaultPolicy } from '../runner.js';

/** The built CLI entry point. */
export const CLI = path.join(packageRoot(), 'dist', 'cli', 'main.js');

/** How a CLI process ended. */
export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** A running CLI process. */
export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  readonly ended: Promise<CliExit>;
}

/** Starts `helix ...args`; it is SIGKILLed after `timeoutMs` (every wait is bounded). */
export function startHelix(
  args: readonly string[],
  opts: { cwd?: string; timeoutMs?: number; uid?: number; gid?: number } = {},
): CliProcess {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? packageRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.gid ?? opts.uid }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const ended = new Promise<CliExit>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - t0) });
    }),
  );
  return { child, pid: child.pid!, stdout: () => stdout, stderr: () => stderr, ended };
}

/** Runs `helix ...args` to its end. */
export function helix(
  args: readonly string[],
  opts: { cwd?: string; timeoutMs?: number; uid?: number; gid?: number } = {},
): Promise<CliExit> {
  return startHelix(args, opts).ended;
}

/** SIGKILLs a child and waits for it to be gone. */
export function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Waits for `check` to hold, polling every `every` ms, failing the check after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000, every = 10): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new CheckFailure(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Whether stderr shows a stack trace or a raw validation dump instead of a clean error. */
export function looksRaw(stderr: string): boolean {
  return /\n\s+at .+[:(]/.test(stderr) || /ZodError|"code":\s*"invalid_/.test(stderr) || /internal error/.test(stderr);
}

/** One clean error on stderr: `helix: CODE: ` once, a hint, no stack or raw dump, no signal, the exit code. */
export function expectCleanError(r: CliExit, code: string, exit: number, what: string): void {
  expect(r.signal === null, `${what}: the process died by ${r.signal}: ${r.stderr.slice(0, 400)}`);
  expect(r.code === exit, `${what}: exit ${r.code}, not ${exit}; stderr: ${r.stderr.slice(0, 400)}`);
  expect(r.stderr.includes(`helix: ${code}: `), `${what}: stderr does not give ${code}: ${r.stderr.slice(0, 400)}`);
  expect((r.stderr.match(/helix: [A-Z]-/g) ?? []).length === 1, `${what}: not exactly one error on stderr: ${r.stderr.slice(0, 400)}`);
  expect(/\nhint: /.test(r.stderr), `${what}: no hint on stderr: ${r.stderr.slice(0, 400)}`);
  expect(!looksRaw(r.stderr), `${what}: stderr shows a stack or a raw dump: ${r.stderr.slice(0, 400)}`);
}

/** The first line of stderr, for evidence. */
export const firstLine = (text: string): string => text.split('\n')[0] ?? '';

/** The store file under a Helix home. */
export const storeFile = (home: string): string => path.join(home, 'helix.mdb');

/** Writes the check's default policy (imports and exports under the check's directory) to a file; returns its path. */
export function writeCheckPolicy(ctx: CheckContext, extra: Record<string, unknown> = {}): string {
  const file = path.join(ctx.env.dir, 'store-policy.yaml');
  const doc = checkDefaultPolicy(ctx.env);
  writeFileSync(
    file,
    stringify({ ...doc, ...extra, ceilings: { ...((doc.ceilings as object | undefined) ?? {}), maxImportBytes: 1_000_000_000 } }),
  );
  return file;
}

/** A file of `mib` MiB under `dir` whose every MiB differs (no chunk deduplicates against another). */
export function bigFile(file: string, mib: number, seed = 0): string {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(1 << 20);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((Math.imul(i + 1, 2654435761) ^ seed) >>> 0, i);
  try {
    for (let i = 0; i < mib; i++) {
      block.writeUInt32BE(i, 0);
      block.writeUInt32BE(seed, 4);
      writeSync(fd, block);
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

/** Size of a file, 0 when absent. */
export function fileSize(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/** Writes `bytes` at `offset` of `file`. */
export function patchFile(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

/** Reads `length` bytes at `offset` of `file`. */
export function readAt(file: string, offset: number, length: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, offset);
    return buf;
  } finally {
    closeSync(fd);
  }
}

export const u16 = (n: number): Buffer => Buffer.from(new Uint16Array([n]).buffer);
export const u32 = (n: number): Buffer => Buffer.from(new Uint32Array([n]).buffer);
export const u64 = (n: bigint): Buffer => Buffer.from(new BigUint64Array([n]).buffer);

/** LMDB's layout (mdb.c, 64-bit, lmdb-js 3): a page header of 24 bytes, then the meta. */
export const LMDB = {
  pageHeader: 24,
  flagsAt: 18,
  meta: { magic: 0, version: 4, psize: 24, freeDb: 24, mainDb: 72, lastPage: 120, txnid: 128 },
  db: { flags: 4, depth: 6, entries: 32, root: 40 },
  P_BRANCH: 0x01,
  P_LEAF: 0x02,
  F_SUBDATA: 0x02,
} as const;

/** The page size meta page 0 records. */
export function pageSizeOf(file: string): number {
  return readAt(file, LMDB.pageHeader + LMDB.meta.psize, 4).readUInt32LE(0);
}

/** The newest meta page (0 or 1) of a store file and its transaction id. */
export function newestMeta(file: string): { page: 0 | 1; txnid: bigint; offset: number } {
  const ps = pageSizeOf(file);
  const ids = [0, 1].map((p) => readAt(file, p * ps + LMDB.pageHeader + LMDB.meta.txnid, 8).readBigUInt64LE(0));
  const page = ids[1]! > ids[0]! ? 1 : 0;
  return { page, txnid: ids[page]!, offset: page * ps };
}

/**
 * The root page of the named database `name`, found as LMDB finds it: the main tree's root from
 * the newest meta (a one-level main tree: a leaf page of named databases), then the node whose
 * key is `name` (NUL-terminated, as lmdb-js stores database names), whose value is its MDB_db.
 */
export function namedDbRoot(file: string, name: string): { root: bigint; depth: number; entries: bigint } {
  const ps = pageSizeOf(file);
  const meta = newestMeta(file);
  const at = meta.offset + LMDB.pageHeader + LMDB.meta.mainDb;
  const mainRoot = readAt(file, at + LMDB.db.root, 8).readBigUInt64LE(0);
  const mainDepth = readAt(file, at + LMDB.db.depth, 2).readUInt16LE(0);
  if (mainDepth !== 1) throw new CheckFailure(`the main tree is ${mainDepth} levels deep; the kit reads a one-level main tree only`);
  const page = readAt(file, Number(mainRoot) * ps, ps);
  const flags = page.readUInt16LE(LMDB.flagsAt);
  if ((flags & LMDB.P_LEAF) === 0) throw new CheckFailure(`page ${mainRoot} (main root) is not a leaf (flags 0x${flags.toString(16)})`);
  // A named database's node: data size 48 (an MDB_db), flag F_SUBDATA, the key with its NUL, then the MDB_db.
  const node = Buffer.concat([Buffer.from([48, 0, 0, 0, LMDB.F_SUBDATA, 0, name.length + 1, 0]), Buffer.from(`${name}\0`, 'latin1')]);
  const found = page.indexOf(node, LMDB.pageHeader);
  if (found >= 0) {
    const db = found + node.length;
    return {
      root: page.readBigUInt64LE(db + LMDB.db.root),
      depth: page.readUInt16LE(db + LMDB.db.depth),
      entries: page.readBigUInt64LE(db + LMDB.db.entries),
    };
  }
  throw new CheckFailure(`no named database ${name} in the main tree`);
}

/** Opens the diagnostic face of the store under `home` (another handle, as another process would), runs `body`, closes it. */
export async function withDiagnostics<T>(home: string, body: (store: StoreDiagnostics) => Promise<T> | T): Promise<T> {
  const store = openDiagnostics(home);
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

/** Opens the records of the store under `home` (the typed reads, no toolpacks), runs `body`, closes it. */
export async function withRecords<T>(home: string, body: (records: StoreRecords) => Promise<T> | T): Promise<T> {
  const records = openRecords({ home, policy: loadPolicy(undefined).policy });
  try {
    return await body(records);
  } finally {
    await records.close();
  }
}

/** MessagePack that cannot be decoded: a string header announcing 25 bytes, followed by 3. */
export const UNDECODABLE = Buffer.from([0xd9, 0x19, 0x61, 0x62, 0x63]);

/** `helix store check --json --home home`, parsed. */
export async function storeCheck(home: string): Promise<{ exit: CliExit; report: CheckReport }> {
  const exit = await helix(['store', 'check', '--json', '--home', home]);
  let report: CheckReport;
  try {
    report = JSON.parse(exit.stdout) as CheckReport;
  } catch {
    throw new CheckFailure(`helix store check --json printed no report (exit ${exit.code}): ${exit.stderr.slice(0, 400)}`);
  }
  return { exit, report };
}

/** Problems of a report as `CODE database key` lines. */
export const problemLines = (r: CheckReport): string[] => r.problems.map((p) => `${p.code} ${p.database} ${p.key}`);

/** The size in bytes of the mapping of `file` in /proc/<pid>/maps (each mapping of it). */
export function mappingsOf(pid: number | 'self', file: string): Array<{ start: bigint; bytes: bigint }> {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
  const out: Array<{ start: bigint; bytes: bigint }> = [];
  for (const line of maps.split('\n')) {
    if (!line.endsWith(` ${file}`)) continue;
    const [range] = line.split(' ');
    const [a, b] = range!.split('-').map((h) => BigInt(`0x${h}`));
    out.push({ start: a!, bytes: b! - a! });
  }
  return out;
}
