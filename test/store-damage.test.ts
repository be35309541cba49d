// A damaged store is a clean error (ABI-STORE-010..021): a run record's bytes, an artifact record,
// a chunk, the file header, each read through the CLI (one clean error, its exit code, no stack),
// in-process and over MCP, with a well-behaved call served afterwards by the same host.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { importInline } from '../host/4-calls/artifacts/index.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost } from '../host/index.js';
import { serveWithClient } from './fixtures/mcp/serve.js';
import { echoModule } from './helpers/guest-wat.js';
import { damageBlob, damageHeader, damageRecord, looksRaw, storeFile } from './helpers/store-damage.js';
import { runCli as helix, type CliExit as Exit } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const dirs: Array<{ dir: string; cleanup: () => void }> = [];
afterAll(() => {
  for (const d of dirs) d.cleanup();
});
let plugins: string;

/** A store with two runs of t.echo and an imported artifact. */
async function prepared(): Promise<{ home: string; runs: string[]; artifact: { id: string; sha256: string } }> {
  const t = tempDir('helix-damage-');
  dirs.push(t);
  const host = await createHost({ toolpacksDir: plugins, home: t.dir });
  try {
    const runs: string[] = [];
    for (const n of [1, 2]) runs.push((await host.call({ tool_id: 't.echo', input: { n } })).run_id!);
    const artifact = await importInline(hostStore(host), 'ACGT\n', { label: 'seq' });
    return { home: t.dir, runs, artifact };
  } finally {
    await host.close();
  }
}

/** One clean error on stderr: the code, a hint, no stack or raw dump, no signal. */
function expectCleanError(r: Exit, code: string, exit: number): void {
  expect(r.signal).toBeNull();
  expect(r.code).toBe(exit);
  expect(r.stderr).toContain(`helix: ${code}: `);
  expect(r.stderr).toMatch(/\nhint: /);
  expect(r.stderr.match(/helix: [A-Z]-/g)).toHaveLength(1);
  expect(looksRaw(r.stderr)).toBe(false);
}

beforeAll(async () => {
  const p = await toolpacksDir([{ id: 't.echo', module: echoModule() }]);
  dirs.push(p);
  plugins = p.dir;
}, 120_000);

describe('a damaged run record (ABI-STORE-020)', () => {
  it('is one clean D-DATA-RECORD-INVALID from runs list, runs show, verify and runs export', async () => {
    const { home, runs } = await prepared();
    await damageRecord(home, 'runs', runs[0]!);
    for (const args of [
      ['runs', 'list'],
      ['runs', 'show', runs[0]!],
      ['verify', runs[0]!],
      ['runs', 'export', runs[0]!, path.join(home, 'crate')],
    ]) {
      const r = await helix([...args, '--home', home]);
      expectCleanError(r, 'D-DATA-RECORD-INVALID', 1);
      expect(r.stderr).toContain(`The record ${runs[0]} in the store's runs database is damaged: it cannot be decoded`);
    }
    // The sound run is still shown.
    expect(JSON.parse((await helix(['runs', 'show', runs[1]!, '--home', home])).stdout)).toMatchObject({
      run_id: runs[1],
      status: 'succeeded',
    });
  }, 120_000);

  it('makes a replaying helix call return exactly one envelope and exit 1; the next call succeeds', async () => {
    const { home, runs } = await prepared();
    await damageRecord(home, 'runs', runs[0]!);
    const r = await helix(['call', 't.echo', '--toolpacks', plugins, '--home', home, '--input', '{"n":1}', '--compact']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(ResponseEnvelopeSchema.parse(JSON.parse(lines[0]!))).toMatchObject({
      status: 'terminal_error',
      error: { code: 'D-DATA-RECORD-INVALID', details: { database: 'runs', key: runs[0] } },
    });
    expect(looksRaw(r.stderr)).toBe(false);
    expect((await helix(['call', 't.echo', '--toolpacks', plugins, '--home', home, '--input', '{"n":3}', '--compact'])).code).toBe(0);

    // In one host: the damaged run is an envelope, and the host goes on serving.
    const host = await createHost({ toolpacksDir: plugins, home });
    try {
      expect(await host.call({ tool_id: 't.echo', input: { n: 1 } })).toMatchObject({
        status: 'terminal_error',
        error: { code: 'D-DATA-RECORD-INVALID' },
      });
      expect(await host.call({ tool_id: 'helix.run_get', input: { run_id: runs[0] } })).toMatchObject({
        status: 'terminal_error',
        error: { code: 'D-DATA-RECORD-INVALID' },
      });
      expect(await host.call({ tool_id: 't.echo', input: { n: 4 } })).toMatchObject({ status: 'success', output: { n: 4 } });
    } finally {
      await host.close();
    }
  }, 120_000);

  it('is an error result of run_get over MCP, and the server keeps serving', async () => {
    const { home, runs, artifact } = await prepared();
    await damageRecord(home, 'runs', runs[0]!);
    await damageRecord(home, 'artifacts', artifact.id);
    const served = await serveWithClient(['--toolpacks', plugins, '--home', home]);
    try {
      const got = await served.client.callTool({ name: 'run_get', arguments: { run_id: runs[0] } });
      expect(got.isError).toBe(true);
      expect(got.structuredContent).toMatchObject({ error: { code: 'D-DATA-RECORD-INVALID', details: { database: 'runs' } } });
      await expect(served.client.readResource({ uri: `helix://artifact/${artifact.id}` })).rejects.toThrow(
        /D-DATA-RECORD-INVALID: The record art_\w+ in the store's artifacts database is damaged/,
      );
      await expect(served.client.listResources()).rejects.toThrow(/D-DATA-RECORD-INVALID/);
      const ok = await served.client.callTool({ name: 't-echo', arguments: { n: 9 } });
      expect(ok.isError).toBeFalsy();
      expect(looksRaw(served.stderr())).toBe(false);
    } finally {
      await served.close();
    }
  }, 120_000);
});

describe('a damaged artifact record or chunk (ABI-STORE-020, ABI-STORE-021)', () => {
  it('is one clean error from artifact list, show and export; a sound call still succeeds', async () => {
    const { home, artifact } = await prepared();
    await damageRecord(home, 'artifacts', artifact.id, Buffer.from([0x81, 0xa2, 0x69, 0x64, 0x07])); // {"id": 7}
    for (const args of [
      ['artifact', 'list'],
      ['artifact', 'show', artifact.id],
    ]) {
      const r = await helix([...args, '--home', home]);
      expectCleanError(r, 'D-DATA-RECORD-INVALID', 1);
      expect(r.stderr).toContain(
        `The record ${artifact.id} in the store's artifacts database is damaged: it does not match the artifacts record schema`,
      );
      expect(r.stderr).toMatch(/\n {2}id: /);
    }
    expect((await helix(['call', 't.echo', '--toolpacks', plugins, '--home', home, '--input', '{"n":5}'])).code).toBe(0);
  }, 120_000);

  it('turns a damaged chunk into D-DATA-CHECKSUM on export', async () => {
    const { home, artifact } = await prepared();
    await damageBlob(home, artifact.sha256);
    // The bundled policy exports under the working directory.
    const r = await helix(['artifact', 'export', artifact.id, 'out.txt', '--home', home], home);
    expectCleanError(r, 'D-DATA-CHECKSUM', 1);
    expect(r.stderr).toContain(artifact.sha256);
  }, 120_000);
});

describe('a damaged file header (ABI-STORE-010)', () => {
  it('makes every command refuse with D-DATA-STORE-HEADER and exit 3 instead of crashing', async () => {
    const { home, runs } = await prepared();
    damageHeader(home);
    const commands = [
      ['runs', 'list', '--home', home],
      ['runs', 'show', runs[0]!, '--home', home],
      ['artifact', 'list', '--home', home],
      ['verify', runs[0]!, '--home', home],
      ['call', 't.echo', '--toolpacks', plugins, '--home', home, '--input', '{"n":1}'],
      ['serve', '--toolpacks', plugins, '--home', home],
    ];
    for (const args of commands) {
      const r = await helix(args);
      expectCleanError(r, 'D-DATA-STORE-HEADER', 3);
      expect(r.stderr).toContain(`The store file ${storeFile(home)} has a damaged header: meta page 0 lacks the LMDB magic number`);
    }
  }, 120_000);
});
