// A process opening the store while another commits (ABI-STORE-007). lmdb-js's LMDB copies, at the
// end of every open, the id of the newest commit it read at the start of the open into the lock
// region, where the next write transaction of any process looks for the commit to start from. A
// commit made in between used to be written over by the next write: runs vanished and the free-page
// list stopped matching the tree. gdb pauses a real `helix runs list` inside its open while a real
// `helix serve` (with the SDK's client) records a run, and again right after the open, when the
// lock region names the older commit, while the server records another run. Nothing may be lost.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_TXNID_AT } from '../host/3-store/commit-base.js';
import { newestCommit, pageSizeOf } from '../host/3-store/header.js';
import { serveWithClient } from './fixtures/mcp/serve.js';
import { echoModule } from './helpers/guest-wat.js';
import { CLI, runCli as helix } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const dirs: Array<{ dir: string; cleanup: () => void }> = [];
afterAll(() => {
  for (const d of dirs) d.cleanup();
});
let plugins: string;

beforeAll(async () => {
  const p = await toolpacksDir([{ id: 'k.echo', module: echoModule() }]);
  dirs.push(p);
  plugins = p.dir;
}, 120_000);

/** Waits for `file` to appear, up to `ms`. */
async function appears(file: string, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (existsSync(file)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return existsSync(file);
}

/** The commit LMDB's lock region names and the newest one the data file's metas hold. */
function commits(home: string): { lockRegion: number; newest: number } {
  const file = path.join(home, 'helix.mdb');
  // Closing a descriptor of the lock file is safe here: this process has no LMDB lock on it.
  const fds = [openSync(file, 'r'), openSync(`${file}-lock`, 'r')] as const;
  try {
    const txnid = Buffer.alloc(8);
    readSync(fds[1], txnid, 0, 8, LOCK_TXNID_AT);
    return { lockRegion: Number(txnid.readBigUInt64LE(0)), newest: newestCommit(fds[0], pageSizeOf(fds[0])) };
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

describe('a store opened while another process commits', () => {
  it('loses no commit: every write starts from the newest one, whatever the opener left in the lock region', async () => {
    expect(spawnSync('gdb', ['--version']).status, 'gdb is installed by scripts/test-setup.sh').toBe(0);
    const home = tempDir('helix-open-race-');
    dirs.push(home);
    const served = await serveWithClient(['--toolpacks', plugins, '--home', home.dir]);
    const runIds: string[] = [];
    const call = async (n: number): Promise<void> => {
      const r = await served.client.callTool({ name: 'k-echo', arguments: { n } });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      runIds.push(r._meta!['helix/run_id'] as string);
    };
    const flags = tempDir('helix-open-race-flags-');
    dirs.push(flags);
    const flag = (name: string): string => path.join(flags.dir, name);
    try {
      await call(0);
      // First stop: inside LMDB's open, after it read the metas (mdb_env_map follows the read).
      // Second stop: the open is over, the first transaction about to begin.
      const script = [
        'set pagination off',
        'set confirm off',
        'set breakpoint pending on',
        'handle SIGUSR1 SIGUSR2 SIGPIPE SIGCHLD nostop noprint pass',
        'break mdb_env_map',
        'run',
        `shell touch ${flag('paused-open')}`,
        `shell while [ ! -e ${flag('go-open')} ]; do sleep 0.05; done`,
        'delete',
        'break mdb_txn_begin',
        'continue',
        `shell touch ${flag('paused-begin')}`,
        `shell while [ ! -e ${flag('go-begin')} ]; do sleep 0.05; done`,
        'delete',
        'continue',
      ].join('\n');
      writeFileSync(flag('pause.gdb'), script);
      const opener = spawn(
        'gdb',
        ['-batch', '-x', flag('pause.gdb'), '--args', process.execPath, CLI, 'runs', 'list', '--home', home.dir, '--json'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let gdbOut = '';
      opener.stdout.on('data', (c: Buffer) => (gdbOut += c.toString('utf8')));
      opener.stderr.on('data', (c: Buffer) => (gdbOut += c.toString('utf8')));
      const ended = new Promise<number | null>((resolve) => opener.on('close', resolve));
      try {
        expect(await appears(flag('paused-open'), 60_000), `gdb never paused the open:\n${gdbOut}`).toBe(true);
        await call(1);
        writeFileSync(flag('go-open'), '');
        expect(await appears(flag('paused-begin'), 60_000), `gdb never paused after the open:\n${gdbOut}`).toBe(true);
        // The race happened: the open put the commit it had read back into the lock region.
        const lagging = commits(home.dir);
        expect(lagging.lockRegion, JSON.stringify(lagging)).toBeLessThan(lagging.newest);
        await call(2);
        writeFileSync(flag('go-begin'), '');
        expect(await ended, gdbOut).toBe(0);
      } finally {
        writeFileSync(flag('go-open'), '');
        writeFileSync(flag('go-begin'), '');
        opener.kill('SIGKILL');
      }
      const after = commits(home.dir);
      expect(after.lockRegion).toBe(after.newest);
      await call(3);
    } finally {
      await served.close();
    }
    const list = await helix(['runs', 'list', '--home', home.dir, '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ run_id: string }>).map((r) => r.run_id).sort()).toEqual([...runIds].sort());
    const check = await helix(['store', 'check', '--home', home.dir]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
  }, 300_000);
});
