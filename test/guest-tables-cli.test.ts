// Guest tables through the built CLI and `helix serve` (ABI-ALLOC-*): the three and six
// tables of 10 million entries are refused at load by `helix validate`, `helix call` and `helix
// serve`; a guest growing tables declared without a maximum stops at the ceiling, and the
// process's peak memory is measured around it; a well-behaved call follows in the same server.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TABLE_ELEMENTS } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { echoModule } from './helpers/guest-wat.js';
import { bigTablesModule, growTablesModule } from './helpers/table-guests.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { CLI, serveRaw, serveWithClient } from './fixtures/mcp/serve.js';

const run = promisify(execFile);
const MAX_RSS = pathToFileURL(path.join(packageRoot(), 'test', 'fixtures', 'max-rss.mjs')).href;
const home = tempDir('helix-home-');
let good: { dir: string; cleanup: () => void };
let bad: { dir: string; cleanup: () => void };
beforeAll(async () => {
  good = await toolpacksDir([
    { id: 'cli.grow3', module: growTablesModule(3) },
    { id: 'cli.echo', module: echoModule() },
  ]);
  bad = await toolpacksDir([
    { id: 'cli.tables3', module: bigTablesModule(3) },
    { id: 'cli.tables6', module: bigTablesModule(6) },
  ]);
});
afterAll(() => {
  good?.cleanup();
  bad?.cleanup();
  home.cleanup();
});

/** Runs the built CLI with the peak-RSS reporter preloaded; `rssMib` is that peak. */
async function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string; rssMib: number }> {
  let out: { code: number; stdout: string; stderr: string };
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', MAX_RSS, CLI, ...args], {
      cwd: packageRoot(),
      env: { ...process.env, HELIX_HOME: home.dir },
      maxBuffer: 1 << 24,
    });
    out = { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    out = { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
  const kib = Number(/max_rss_kib=(\d+)/.exec(out.stderr)?.[1]);
  return { ...out, rssMib: Math.round(kib / 1024) };
}

const refusal = (id: string) =>
  new RegExp(
    `${id}\\.tool\\.yaml:\\d+: module: ABI-ALLOC-002: table 0 starts at 10000000 elements, above the ceiling of ${MAX_TABLE_ELEMENTS} elements`,
  );

describe('helix validate and helix call on tables past the ceiling', () => {
  it('helix validate lists the three- and six-table modules as violations and exits 1 (ABI-ALLOC-002)', async () => {
    const r = await helix(['validate', '--toolpacks', bad.dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(refusal('cli_tables3'));
    expect(r.stderr).toMatch(refusal('cli_tables6'));
    expect(r.stderr).toMatch(/2 violations; the host would refuse to start/);
  });

  it('helix call refuses to start on them with exit 3, in bounded memory (ABI-ALLOC-002)', async () => {
    const r = await helix(['call', 'cli.tables3', '--toolpacks', bad.dir, '--input', '{}']);
    console.log(`helix call on 3 + 6 tables of 10M: exit ${r.code}, peak rss ${r.rssMib} MiB`);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/P-PRECOND-MANIFEST-INVALID/);
    expect(r.stderr).toMatch(refusal('cli_tables3'));
  });

  it('helix call on a guest growing three tables without a maximum stops at the ceiling, and the peak memory stays bounded (ABI-ALLOC-001, ABI-ALLOC-003)', async () => {
    const base = await helix(['call', 'cli.echo', '--toolpacks', good.dir, '--input', '{"n":1}']);
    expect(base.code).toBe(0);
    const r = await helix(['call', 'cli.grow3', '--toolpacks', good.dir, '--input', '{}']);
    console.log(
      `helix call: echo peak rss ${base.rssMib} MiB; guest growing 3 tables peak rss ${r.rssMib} MiB (+${r.rssMib - base.rssMib})`,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).output).toEqual({ value: MAX_TABLE_ELEMENTS });
    // About 60 MiB for a full ceiling of grown funcref elements; without it the same guest takes
    // about 1.5 GiB (10 million elements per table). Generous, to stay clear of noise.
    expect(r.rssMib - base.rssMib).toBeLessThan(512);
  }, 60_000);
});

describe('helix serve on tables past the ceiling', () => {
  it('helix serve refuses to start with exit 3, the violation on stderr and nothing on stdout (ABI-ALLOC-002)', async () => {
    const s = serveRaw(['--toolpacks', bad.dir, '--home', home.dir]);
    const code = await s.exited;
    expect(code).toBe(3);
    expect(s.stdout()).toBe('');
    expect(s.stderr()).toMatch(/P-PRECOND-MANIFEST-INVALID/);
    expect(s.stderr()).toMatch(refusal('cli_tables6'));
  });

  it('helix serve runs a guest growing its tables to the ceiling, then serves the next call (ABI-ALLOC-003)', async () => {
    const served = await serveWithClient(['--toolpacks', good.dir, '--home', home.dir]);
    try {
      const grown = (await served.client.callTool({ name: 'cli-grow3', arguments: {} })) as CallToolResult;
      expect(grown.isError).toBeFalsy();
      expect(grown.structuredContent).toEqual({ value: MAX_TABLE_ELEMENTS });
      const echo = (await served.client.callTool({ name: 'cli-echo', arguments: { n: 2 } })) as CallToolResult;
      expect(echo.structuredContent).toEqual({ n: 2 });
    } finally {
      await served.close();
    }
  }, 60_000);
});
