// The `helix` command line, run as a real child process from the built package.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { echoModule, numberResultModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');

const home = tempDir('helix-home-');
afterAll(() => home.cleanup());

async function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], {
      cwd: packageRoot(),
      env: { ...process.env, HELIX_HOME: home.dir },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let bad: { dir: string; cleanup: () => void };
let good: { dir: string; cleanup: () => void };
beforeAll(async () => {
  good = await toolpacksDir([
    { id: 'cli.echo', module: echoModule() },
    {
      id: 'cli.burn',
      module: numberResultModule('(loop $l (br $l)) (i64.const 0)'),
      manifest: { timeoutMs: 200, limits: { maxInputBytes: 100, maxOutputBytes: 100, fuel: 5000 } },
    },
  ]);
  bad = await toolpacksDir([
    { id: 'cli.bad_one', module: echoModule(), manifest: { version: 'one' } },
    { id: 'cli.bad_two', module: echoModule(), manifest: { digest: `sha256:${'0'.repeat(64)}`, timeoutMs: -1 } },
  ]);
});
afterAll(() => {
  good?.cleanup();
  bad?.cleanup();
});

describe('helix validate', () => {
  it('exits 0 on the bundled toolpacks', async () => {
    const r = await helix(['validate']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok: \d+ toolpacks? valid/);
  });

  it('exits 1 and lists every violation on stderr as file: field: reason', async () => {
    const r = await helix(['validate', '--toolpacks', bad.dir]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines.some((l) => /cli_bad_one\.tool\.yaml:\d+: version: /.test(l))).toBe(true);
    expect(lines.some((l) => /cli_bad_two\.tool\.yaml:\d+: timeoutMs: /.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/2 violations; the host would refuse to start/);
  });
});

describe('helix call', () => {
  it('prints the response envelope of a bundled tool and exits 0', async () => {
    const r = await helix(['call', 'seq.gc_content', '--input', '{"sequence":"GGCCAT"}']);
    expect(r.code).toBe(0);
    const env = ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
    expect(env.status).toBe('success');
    expect(env.output).toMatchObject({ gc_count: 4, at_count: 2, length: 6 });
    expect(env.provenance.tool_id).toBe('seq.gc_content');
  });

  it('reads the input from a file', async () => {
    const t = tempDir();
    const file = path.join(t.dir, 'in.json');
    writeFileSync(file, '{"x": [1, 2]}');
    const r = await helix(['call', 'cli.echo', '--toolpacks', good.dir, '--input-file', file, '--compact']);
    t.cleanup();
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout).output).toEqual({ x: [1, 2] });
  });

  it('exits 1 with the fuel error when the tool runs out of fuel', async () => {
    const r = await helix(['call', 'cli.burn', '--toolpacks', good.dir, '--input', '{}']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('S-TOOL-FUEL-EXHAUSTED');
  });

  it('exits 2 with an invalid_request envelope for input that is not JSON', async () => {
    const r = await helix(['call', 'cli.echo', '--toolpacks', good.dir, '--input', '{sequence: ACGT}']);
    expect(r.code).toBe(2);
    const env = ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
    expect(env.error?.code).toBe('I-REQ-JSON');
  });

  it('exits 2 when neither or both of --input and --input-file are given', async () => {
    expect((await helix(['call', 'cli.echo', '--toolpacks', good.dir])).code).toBe(2);
    expect((await helix(['call', 'cli.echo', '--toolpacks', good.dir, '--input', '{}', '--input-file', 'x.json'])).code).toBe(2);
  });

  it('exits 3 and refuses to start when any toolpack is invalid (fail-closed)', async () => {
    const r = await helix(['call', 'cli.bad_one', '--toolpacks', bad.dir, '--input', '{}']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/P-PRECOND-MANIFEST-INVALID/);
    expect(r.stderr).toMatch(/hint: /);
  });

  it('exits 2 on a bad option value, naming the option', async () => {
    const r = await helix(['call', 'cli.echo', '--toolpacks', good.dir, '--input', '{}', '--timeout-ms', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--timeout-ms must be a positive integer/);
  });
});

describe('helix tools', () => {
  it('lists the loaded tools, and as JSON with schemas and effective limits', async () => {
    const table = await helix(['tools', '--toolpacks', good.dir]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/cli\.echo\s+1\.0\.0\s+wasm\s+pure/);
    expect(table.stdout).toMatch(/helix\.artifact_list\s+1\.0\.0\s+builtin/);
    const json = await helix(['tools', '--toolpacks', good.dir, '--json']);
    const tools = JSON.parse(json.stdout) as Array<{ id: string; limits: { fuel: number }; inputSchema: unknown }>;
    expect(tools.map((t) => t.id).filter((id) => id.startsWith('cli.'))).toEqual(['cli.burn', 'cli.echo']);
    expect(tools[0]!.limits.fuel).toBe(5000);
  });

  it('takes --plugins, the former name of --toolpacks, unlisted in the help, and refuses the two naming different directories', async () => {
    const byNew = await helix(['tools', '--toolpacks', good.dir, '--json']);
    const byOld = await helix(['tools', '--plugins', good.dir, '--json']);
    expect(byOld.code).toBe(0);
    expect(byOld.stdout).toBe(byNew.stdout);
    const both = await helix(['tools', '--toolpacks', good.dir, '--plugins', bad.dir]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--toolpacks \(or its former name --plugins\), not both/);
    const help = await helix(['tools', '--help']);
    expect(help.stdout).toMatch(/--toolpacks <dir>/);
    expect(help.stdout).not.toMatch(/--plugins/);
  });
});

describe('helix --help', () => {
  it('describes each command', async () => {
    const r = await helix(['call', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--input-file/);
    expect(r.stdout).toMatch(/--policy/);
  });
});
