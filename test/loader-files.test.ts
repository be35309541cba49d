// README "Security", the row of manifests reaching out of their toolpack, end to end: loading reads only what belongs to the toolpack. Each hostile
// layout is refused through the built CLI (`helix validate` exit 1, `helix tools --json` exit 3)
// and through `helix serve` (exit 3, nothing on stdout), naming the reference and the rule, and
// never quoting the file it refused (ABI-FILE-001..009, -013).
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveRaw, serveWithClient } from './fixtures/mcp/serve.js';
import { runCli, type CliRun } from './helpers/cli-process.js';
import { echoModule } from './helpers/guest-wat.js';
import { tempDir, writeToolpack, type ToolpackSpec } from './helpers/toolpack.js';

const MARKER = 'OUTSIDE-MARKER-9b2f';
const ENV_MARKER = 'env-marker-value-77c1';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
// Any of these in stderr means a refused file was quoted, or an internal error escaped.
const LEAKS = [MARKER, ENV_MARKER, 'root:x:0', 'internal error', /\n\s+at .+:\d+:\d+\)?\n/];
const env = { ...process.env, HELIX_ENV_MARKER: ENV_MARKER };
// Each test spawns several CLI processes; on a busy machine one may wait long for a CPU.
const SPAWNS_TIMEOUT = 300_000;

const root = tempDir('helix-files-');
const home = tempDir('helix-files-home-');
afterAll(() => {
  root.cleanup();
  home.cleanup();
});
let outside: string;
beforeAll(() => {
  outside = path.join(root.dir, 'outside.json');
  writeFileSync(outside, JSON.stringify({ type: 'object', title: MARKER }));
});

/** The built CLI with this file's environment and home. */
function helix(args: readonly string[], opts: { measure?: boolean } = {}): Promise<CliRun> {
  return runCli(args, { env: { ...env, HELIX_HOME: home.dir }, killAfterMs: 90_000, ...opts });
}

/** `helix serve` on `plugins`: sends initialize anyway and waits for the exit. */
async function serve(args: readonly string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const s = serveRaw([...args, '--home', home.dir], { env });
  s.send(INITIALIZE);
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 90_000);
  const code = await s.exited;
  clearTimeout(timer);
  return { code, stdout: s.stdout(), stderr: s.stderr() };
}

function expectNoLeak(text: string): void {
  for (const leak of LEAKS) {
    if (typeof leak === 'string') expect(text).not.toContain(leak);
    else expect(text).not.toMatch(leak);
  }
}

/** A toolpacks directory holding one toolpack `pack/` built from `spec`, then changed by `arrange`. */
async function plugins(name: string, spec: Partial<ToolpackSpec>, arrange?: (pack: string, manifest: string) => void): Promise<string> {
  const dir = path.join(root.dir, name, 'plugins');
  const { manifestPath } = await writeToolpack(dir, { id: 'files.tool', module: echoModule(), dirName: 'pack', ...spec });
  arrange?.(path.dirname(manifestPath), manifestPath);
  return dir;
}

const BOMB = [
  'x-bomb:',
  '  a: &a [x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 8 }, (_, i) => `  ${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
].join('\n');

/** Each hostile layout: how to make it, and the violation it must produce. */
const CASES: Array<[string, () => Promise<string>, RegExp]> = [
  [
    'a relative $ref out of the pack (ABI-FILE-001)',
    () => plugins('rel', { inputSchema: { $ref: '../../../outside.json' } }),
    /inputSchema\.\$ref: \$ref \.\.\/\.\.\/\.\.\/outside\.json leaves the toolpack directory .*\(ABI-FILE-001\)/,
  ],
  [
    'an absolute $ref (ABI-FILE-001)',
    () => plugins('abs', { inputSchema: { $ref: outside } }),
    /inputSchema\.\$ref: \$ref \/.*outside\.json is an absolute path.*\(ABI-FILE-001\)/,
  ],
  [
    '$ref /etc/passwd, never quoted (ABI-FILE-001)',
    () => plugins('passwd', { outputSchema: { $ref: '/etc/passwd' } }),
    /outputSchema\.\$ref: \$ref \/etc\/passwd is an absolute path/,
  ],
  [
    '$ref /proc/self/environ, never quoted (ABI-FILE-001)',
    () => plugins('environ', { outputSchema: { $ref: '/proc/self/environ' } }),
    /outputSchema\.\$ref: \$ref \/proc\/self\/environ is an absolute path/,
  ],
  [
    'a symlink in the pack to /proc/self/environ (ABI-FILE-002)',
    () =>
      plugins('environ-link', { inputSchema: { $ref: 'env.json' } }, (pack) =>
        symlinkSync('/proc/self/environ', path.join(pack, 'env.json')),
      ),
    /\$ref env\.json resolves through a symbolic link to a place outside the toolpack directory .*\(ABI-FILE-002\)/,
  ],
  [
    'a symlink in the pack escaping to a file outside (ABI-FILE-002)',
    () =>
      plugins('link', { inputSchema: { $ref: 'schemas/in.json' } }, (pack) => {
        mkdirSync(path.join(pack, 'schemas'));
        symlinkSync(outside, path.join(pack, 'schemas', 'in.json'));
      }),
    /\$ref schemas\/in\.json resolves through a symbolic link .*\(ABI-FILE-002\)/,
  ],
  [
    '$ref /dev/zero, refused at once (ABI-FILE-001, -003)',
    () => plugins('zero', { inputSchema: { $ref: '/dev/zero' } }),
    /\$ref \/dev\/zero is an absolute path/,
  ],
  [
    'a FIFO in the pack, refused at once (ABI-FILE-003)',
    () => plugins('fifo', { inputSchema: { $ref: 'pipe.json' } }, (pack) => execFileSync('mkfifo', [path.join(pack, 'pipe.json')])),
    /\$ref pipe\.json is a FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)/,
  ],
  [
    'a YAML alias bomb in the manifest, with its line (ABI-FILE-008)',
    () => plugins('bomb', {}, (_pack, manifest) => appendFileSync(manifest, `${BOMB}\n`)),
    /files_tool\.tool\.yaml:\d+: x-bomb\.c\[0\]: alias \*b refers to a node that itself holds an alias.*\(ABI-FILE-008\)/,
  ],
];

describe('loading refuses what does not belong to the toolpack, through the CLI and helix serve', () => {
  it.each(CASES)(
    '%s',
    async (_name, make, violation) => {
      const dir = await make();
      // Three separate processes, started together: the waits overlap.
      const [validate, tools, served] = await Promise.all([
        helix(['validate', '--toolpacks', dir]),
        helix(['tools', '--json', '--toolpacks', dir]),
        serve(['--toolpacks', dir]),
      ]);
      expect(validate.code, validate.stderr).toBe(1);
      expect(validate.stderr).toMatch(violation);
      expect(validate.stderr).toMatch(/1 violation; the host would refuse to start/);
      expectNoLeak(validate.stderr + validate.stdout);

      expect(tools.code, tools.stderr).toBe(3);
      expect(tools.stdout).toBe('');
      expect(tools.stderr).toMatch(/^helix: P-PRECOND-MANIFEST-INVALID: 1 toolpack violation/);
      expect(tools.stderr).toMatch(violation);
      expectNoLeak(tools.stderr);

      expect(served.code, served.stderr).toBe(3);
      expect(served.stdout).toBe('');
      expect(served.stderr).toMatch(violation);
      expectNoLeak(served.stderr);
    },
    SPAWNS_TIMEOUT,
  );

  it(
    'refuses a 50 MB manifest before reading it, in bounded memory (ABI-FILE-005)',
    async () => {
      const dir = await plugins('huge', {}, (_pack, manifest) => {
        const line = `# ${'x'.repeat(97)}\n`;
        appendFileSync(manifest, line.repeat((50 * 1024 * 1024) / line.length));
      });
      const r = await helix(['validate', '--toolpacks', dir], { measure: true });
      console.log(`helix validate on a 50 MB manifest: exit ${r.code}, peak RSS ${r.maxRssKb} KiB`);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /files_tool\.tool\.yaml: -: the manifest is 524\d{5} bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/,
      );
      const served = await serve(['--toolpacks', dir]);
      expect(served.code).toBe(3);
      expect(served.stdout).toBe('');
    },
    SPAWNS_TIMEOUT,
  );

  it(
    'refuses a policy with an alias bomb as a violation with its line, not an internal error (ABI-FILE-008)',
    async () => {
      const policy = path.join(root.dir, 'bomb.policy.yaml');
      writeFileSync(policy, `version: 1\ntools:\n  allow: ["*"]\n${BOMB}\n`);
      const dir = await plugins('policy-bomb', {});
      for (const r of [
        await helix(['validate', '--toolpacks', dir, '--policy', policy]),
        await serve(['--toolpacks', dir, '--policy', policy]),
      ]) {
        expect(r.code, r.stderr).toBe(3);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/^helix: P-PRECOND-POLICY-INVALID: /);
        expect(r.stderr).toMatch(/bomb\.policy\.yaml:\d+: x-bomb\.c\[0\]: alias \*b refers to a node that itself holds an alias/);
        expectNoLeak(r.stderr);
      }
    },
    SPAWNS_TIMEOUT,
  );

  it(
    'keeps refs inside the pack working: nested, cyclic and through an inner symlink, through the CLI and helix serve',
    async () => {
      const dir = await plugins('good', { inputSchema: { $ref: 'schemas/in.yaml' }, outputSchema: { type: 'object' } }, (pack) => {
        mkdirSync(path.join(pack, 'schemas'));
        writeFileSync(path.join(pack, 'schemas', 'in.yaml'), 'type: object\nproperties:\n  node:\n    $ref: node.json\n');
        writeFileSync(
          path.join(pack, 'schemas', 'node.json'),
          JSON.stringify({ type: 'object', properties: { next: { $ref: 'same.json' }, v: { type: 'number' } } }),
        );
        symlinkSync('node.json', path.join(pack, 'schemas', 'same.json'));
      });
      expect((await helix(['validate', '--toolpacks', dir])).code).toBe(0);
      const tools = await helix(['tools', '--json', '--toolpacks', dir]);
      expect(tools.code).toBe(0);
      const listed = (JSON.parse(tools.stdout) as Array<{ id: string; inputSchema: { $defs: Record<string, unknown> } }>).find(
        (t) => t.id === 'files.tool',
      );
      expect(Object.keys(listed!.inputSchema.$defs)).toEqual(['file_node']);
      const call = await helix(['call', 'files.tool', '--input', JSON.stringify({ node: { v: 1, next: { v: 2 } } }), '--toolpacks', dir]);
      expect(call.code, call.stderr).toBe(0);
      expect(readFileSync(path.join(dir, 'pack', 'schemas', 'node.json'), 'utf8')).toContain('same.json');

      const served = await serveWithClient(['--toolpacks', dir, '--home', home.dir]);
      try {
        const { tools: listedTools } = await served.client.listTools();
        expect(Object.keys((listedTools.find((t) => t.name === 'files-tool')!.inputSchema as unknown as { $defs: object }).$defs)).toEqual([
          'file_node',
        ]);
        const result = await served.client.callTool({ name: 'files-tool', arguments: { node: { v: 1, next: { v: 2 } } } });
        expect(result.isError, JSON.stringify(result)).toBeFalsy();
      } finally {
        await served.close();
      }
    },
    SPAWNS_TIMEOUT,
  );
});
