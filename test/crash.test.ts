// Crash safety with kill -9 on real child processes: mid-import leaves no partial artifact,
// mid-run leaves a run the next start marks interrupted, completed runs are never lost, and runs
// killed before their one commit (ABI-STORE-034) leave nothing behind.
import { spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { openSync, writeSync, closeSync, writeFileSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportArtifact, importFile, listArtifacts } from '../host/4-calls/artifacts/index.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost } from '../host/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { getRun, listRuns, runEvents } from '../host/4-calls/runs/run-store.js';
import { openStore } from '../host/3-store/open-store.js';
import { rawDatabases } from '../host/3-store/raw-access.js';
import { readActiveRuns } from '../host/3-store/runs.js';
import { echoModule, numberResultModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
const dirs: Array<{ dir: string; cleanup: () => void }> = [];
const temp = (): string => {
  const t = tempDir('helix-crash-');
  dirs.push(t);
  return t.dir;
};
afterAll(() => {
  for (const d of dirs) d.cleanup();
});

/** Starts the CLI in a child process. */
function helix(args: string[], cwd: string): ReturnType<typeof spawn> {
  return spawn(process.execPath, [cli, ...args], { cwd, stdio: 'ignore' });
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function kill9(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

let plugins: { dir: string; cleanup: () => void };
beforeAll(async () => {
  plugins = await toolpacksDir([
    { id: 'c.echo', module: echoModule() },
    {
      id: 'c.forever',
      module: numberResultModule('(loop $l (br $l)) (i64.const 0)'),
      manifest: { timeoutMs: 120_000, limits: { maxInputBytes: 100, maxOutputBytes: 100, fuel: 1e15 } },
      outputSchema: { type: 'object' },
    },
  ]);
  dirs.push(plugins);
});

describe('kill -9', () => {
  it('mid-import leaves no partial artifact, and the file imports cleanly afterwards', async () => {
    const root = temp();
    const home = temp();
    const file = path.join(root, 'big.bin');
    const fd = openSync(file, 'w');
    const block = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < 48; i++) writeSync(fd, randomFillSync(block)); // 384 MiB of distinct chunks
    closeSync(fd);
    const policyFile = path.join(root, 'policy.yaml');
    writeFileSync(policyFile, `version: 1\ntools: { allow: ["*"] }\npaths: { importRoots: ["${root}"], exportRoots: ["${root}"] }\n`);

    const child = helix(['artifact', 'import', file, '--home', home, '--policy', policyFile], root);
    const store = openStore(home);
    try {
      await until('chunks to be written', () => rawDatabases(store).chunks.getKeysCount() > 20);
      await kill9(child);
      expect(rawDatabases(store).chunks.getKeysCount()).toBeGreaterThan(0);
      expect(listArtifacts(store)).toEqual([]);
      expect(rawDatabases(store).blobs.getKeysCount()).toBe(0);
      const policy = loadPolicy(policyFile).policy;
      const record = await importFile(store, policy, file);
      expect(record.size).toBe(48 * block.length);
      await exportArtifact(store, policy, record.id, path.join(root, 'back.bin'));
      expect(readFileSync(path.join(root, 'back.bin')).equals(readFileSync(file))).toBe(true);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('mid-run leaves the run to be marked interrupted at the next start; completed runs stay', async () => {
    const home = temp();
    const before = await createHost({ toolpacksDir: plugins.dir, home });
    const done = await before.call({ tool_id: 'c.echo', input: { kept: true } });
    await before.close();
    expect(done.status).toBe('success');

    const child = helix(['call', 'c.forever', '--toolpacks', plugins.dir, '--home', home, '--input', '{}'], packageRoot());
    let runId: string | undefined;
    const watch = openStore(home);
    try {
      await until('the run to start', () => {
        for (const active of readActiveRuns(watch)) runId = active.runId;
        return runId !== undefined;
      });
      await kill9(child);
      expect(getRun(watch, runId!)?.status).toBe('running');
    } finally {
      await watch.close();
    }

    const after = await createHost({ toolpacksDir: plugins.dir, home });
    try {
      expect(after.interrupted).toEqual([runId]);
      expect(getRun(hostStore(after), runId!)).toMatchObject({ status: 'interrupted', owner: null });
      const replay = await after.call({ tool_id: 'c.echo', input: { kept: true } });
      expect(replay).toMatchObject({ status: 'success', replayed: true, run_id: done.run_id });
    } finally {
      await after.close();
    }
  }, 60_000);

  it('amid many short runs sharing commits leaves every run whole or absent, and every reported run stored', async () => {
    const home = temp();
    const dir = temp();
    // A process making short runs 16 at a time, printing each run id once its call has returned.
    const script = path.join(dir, 'many-runs.mjs');
    writeFileSync(
      script,
      `import { createHost } from ${JSON.stringify(pathToFileURL(path.join(packageRoot(), 'dist', 'host', 'index.js')).href)};
const host = await createHost({ toolpacksDir: ${JSON.stringify(plugins.dir)}, home: ${JSON.stringify(home)} });
let n = 0;
await Promise.all(Array.from({ length: 16 }, async () => {
  for (;;) {
    const r = await host.call({ tool_id: 'c.echo', input: { n: n++ } });
    // A call a loaded machine times out is a failed run, as whole as a succeeded one.
    if (r.run_id !== null) process.stdout.write(r.run_id + '\\n');
  }
}));
`,
    );
    const child = spawn(process.execPath, [script], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    await until('200 runs to be reported', () => out.split('\n').length > 200, 180_000);
    await kill9(child);
    const reported = out.split('\n').filter((l) => /^run_[0-9a-f]{32}$/.test(l));

    const store = openStore(home);
    try {
      const runs = listRuns(store);
      const ids = new Set(runs.map((r) => r.run_id));
      for (const id of reported) expect(ids.has(id), `reported run ${id} is in the store`).toBe(true);
      for (const run of runs) {
        // Whole: ended with its log, or (its start committed, the process then killed) interrupted.
        expect(['succeeded', 'failed', 'interrupted'], run.run_id).toContain(run.status);
        if (run.status !== 'interrupted') {
          expect(run.log_artifact_id, run.run_id).not.toBeNull();
          expect(runEvents(store, run.run_id).map((e) => e.kind)).toEqual(['started', 'finished']);
        }
      }
    } finally {
      await store.close();
    }
    const check = spawn(process.execPath, [cli, 'store', 'check', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
    let report = '';
    check.stdout!.on('data', (c: Buffer) => (report += c.toString('utf8')));
    check.stderr!.on('data', (c: Buffer) => (report += c.toString('utf8')));
    expect(await new Promise((resolve) => check.on('close', resolve)), report).toBe(0);
  }, 300_000);
});
