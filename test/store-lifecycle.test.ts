// Opening a store while its last user closes it (ABI-STORE-006). LMDB's last closer destroys the
// shared mutexes of the lock file before it lets go; a process that starts opening in that moment
// used to get them destroyed: its transactions could not begin and lmdb-js crashed it or failed the
// open. gdb pauses a real `helix artifact list` right where LMDB destroys the mutexes of its close,
// a real `helix artifact import` starts meanwhile, and the close is let go: the import must succeed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './fixtures/mcp/serve.js';
import { LIFECYCLE_LOCK } from '../host/3-store/lifecycle-lock.js';

let root: string;
let home: string;
let policy: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'helix-lifecycle-'));
  home = path.join(root, 'home');
  policy = path.join(root, 'policy.yaml');
  writeFileSync(policy, `version: 1\ntools: { allow: ["*"] }\npaths: { importRoots: ["${root}"], exportRoots: ["${root}"] }\n`);
  for (const name of ['a.txt', 'b.txt']) writeFileSync(path.join(root, name), `${name}\n`);
  const first = await helix(['artifact', 'import', path.join(root, 'a.txt'), '--home', home, '--policy', policy]).ended;
  expect(first.code, first.stderr).toBe(0);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs `helix ...args`, resolving with how it ended; `pid` is known at once. */
function helix(args: readonly string[]): {
  pid: number;
  stderr: () => string;
  ended: Promise<{ code: number | string; stdout: string; stderr: string }>;
} {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const ended = new Promise<{ code: number | string; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr });
    }),
  );
  return { pid: child.pid!, stderr: () => stderr, ended };
}

/** Whether process `pid` waits in the kernel for a lock on a file (a `->` line of /proc/locks). */
function blockedOnFileLock(pid: number): boolean {
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .some((line) => new RegExp(`^\\d+: -> \\S+\\s+\\S+\\s+\\S+\\s+${pid}\\s`).test(line));
}

/** Waits for `file` to appear, up to `ms`. */
async function appears(file: string, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (existsSync(file)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return existsSync(file);
}

describe('a store opened while its last user closes it', () => {
  it('opens once the close is over, and the writer that opened it succeeds', async () => {
    expect(spawnSync('gdb', ['--version']).status, 'gdb is installed by scripts/test-setup.sh').toBe(0);
    const paused = path.join(root, 'paused');
    const go = path.join(root, 'go');
    // The break is in libc, reached from LMDB's close with the lock file held exclusively (the
    // only user is closing): the shared mutexes are being destroyed.
    const script = [
      'set pagination off',
      'set confirm off',
      'set breakpoint pending on',
      'handle SIGUSR1 SIGUSR2 SIGPIPE SIGCHLD nostop noprint pass',
      'break pthread_mutex_destroy if $_caller_is("mdb_env_close_active")',
      'run',
      'bt 3',
      `shell touch ${paused}`,
      `shell while [ ! -e ${go} ]; do sleep 0.05; done`,
      'delete',
      'continue',
    ].join('\n');
    writeFileSync(path.join(root, 'pause.gdb'), script);
    const closer = spawn(
      'gdb',
      ['-batch', '-x', path.join(root, 'pause.gdb'), '--args', process.execPath, CLI, 'artifact', 'list', '--home', home],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let gdbOut = '';
    closer.stdout.on('data', (c: Buffer) => (gdbOut += c.toString('utf8')));
    closer.stderr.on('data', (c: Buffer) => (gdbOut += c.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => closer.on('close', resolve));
    try {
      expect(await appears(paused, 60_000), `gdb never paused the close:\n${gdbOut}`).toBe(true);
      expect(gdbOut).toMatch(/mdb_env_close_active/);
      // The closer holds the lifecycle lock while LMDB tears down its lock region.
      expect(existsSync(path.join(home, LIFECYCLE_LOCK))).toBe(true);
      const opener = helix(['artifact', 'import', path.join(root, 'b.txt'), '--home', home, '--policy', policy]);
      // The opener must be waiting before the close goes on: for LMDB's lock file (without the
      // lifecycle lock, where it then finds the mutexes destroyed) or for the lifecycle lock.
      let waiting = false;
      for (const end = Date.now() + 60_000; !waiting && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 50));
        waiting = blockedOnFileLock(opener.pid) || opener.stderr().includes('helix: waiting for process');
      }
      expect(waiting, `the opener never waited: ${opener.stderr()}`).toBe(true);
      writeFileSync(go, '');
      const imported = await opener.ended;
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stderr).toMatch(/^helix: waiting for process \d+ to finish opening or closing the store in .*\n$/);
      expect(await closed).toBe(0);
    } finally {
      writeFileSync(go, '');
      closer.kill('SIGKILL');
    }
    // Both artifacts are there, read by a third process opening the store after the other two.
    const list = await helix(['artifact', 'list', '--home', home, '--json']).ended;
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ source: { path: string } }>).map((a) => path.basename(a.source.path)).sort()).toEqual([
      'a.txt',
      'b.txt',
    ]);
    expect(existsSync(path.join(home, LIFECYCLE_LOCK))).toBe(false);
  }, 180_000);
});
