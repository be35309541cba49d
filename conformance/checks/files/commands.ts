// File checks of the commands that read toolpack files: the plugins walk, helix test's fixtures,
// helix build's manifest, and every CLI refusal, which quotes nothing from outside.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, expectSuccess, type Check } from '../../check.js';
import { ENV_MARKER, expectExit, expectNoLeak, expectViolations, MARKER, outsideFile, runHelix } from '../../kit/files-kit.js';
import { echoModule } from '../../kit/guest-wat.js';
import { writeToolpack } from '../../kit/toolpack.js';
import { manifestOf } from './shared.js';

/** The checks of this file, in the report's order. */
export const commandChecks: readonly Check[] = [
  {
    id: 'files.plugins-walk',
    title:
      'The plugins walk follows no link and opens nothing but directories: linked, FIFO and directory manifests, link loops, escapes, depth',
    category: 'files',
    abi: ['ABI-FILE-010'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID naming a symlinked *.tool.yaml, a FIFO *.tool.yaml and a directory *.tool.yaml ("must be a regular file") and a directory 17+ levels deep (ABI-FILE-010), within 10 s; with those removed the host starts, serves files.walk, and never loads the toolpack behind a directory link pointing outside (nor loops on a link to .)',
    packs: () => [{ id: 'files.walk', dirName: 'pack', module: echoModule() }],
    async run(ctx) {
      const plugins = await ctx.toolpacksDir();
      const manifest = manifestOf(plugins, 'pack', 'files.walk');
      await writeToolpack(path.join(ctx.env.dir, 'elsewhere'), { id: 'files.elsewhere', module: echoModule() });
      symlinkSync(path.join(ctx.env.dir, 'elsewhere'), path.join(plugins, 'escape'));
      symlinkSync('.', path.join(plugins, 'pack', 'loop'));
      const hostile = [
        path.join(plugins, 'linked.tool.yaml'),
        path.join(plugins, 'pipe.tool.yaml'),
        path.join(plugins, 'dir.tool.yaml'),
        path.join(plugins, 'd0'),
      ];
      symlinkSync(manifest, hostile[0]!);
      execFileSync('mkfifo', [hostile[1]!]);
      mkdirSync(hostile[2]!);
      let deep = plugins;
      for (let i = 0; i < 18; i++) deep = path.join(deep, `d${i}`);
      mkdirSync(deep, { recursive: true });
      const t0 = performance.now();
      const refusal = await ctx.refusedStart();
      ctx.observe('refused_after_ms', Math.round(performance.now() - t0));
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /linked\.tool\.yaml: -: a manifest must be a regular file, and this is a symbolic link/,
        /pipe\.tool\.yaml: -: a manifest must be a regular file, and this is a FIFO/,
        /dir\.tool\.yaml: -: a manifest must be a regular file, and this is a directory/,
        /d15: -: directories nested more than 16 levels below the toolpacks directory are not searched \(ABI-FILE-010\)/,
      ]);
      expect(!lines.some((l) => l.includes('elsewhere') || l.includes('loop')), `the walk went through a link: ${JSON.stringify(lines)}`);
      ctx.observe('violations', lines);
      for (const h of hostile) rmSync(h, { recursive: true, force: true });
      const host = await ctx.host();
      const ids = host.tools().map((t) => t.id);
      expect(ids.includes('files.walk') && !ids.includes('files.elsewhere'), `tools served: ${ids.join(', ')}`);
      expectSuccess(await ctx.call('files.walk', { walked: true }));
    },
  },
  {
    id: 'files.helix-test-fixtures',
    title:
      'helix test fails each fixture that is a FIFO, links out, climbs out with @data/, is too deep or holds 1e400, and runs the good one',
    category: 'files',
    abi: ['ABI-FILE-011', 'ABI-FILE-013'],
    engines: ['helix'],
    expected:
      'helix test (child process) exits 1 within 60 s with one FAIL line per hostile fixture naming its rule (FIFO: ABI-FILE-003, link out: ABI-FILE-002, @data/../..: ABI-FILE-001, data link out, 100 levels deep: ABI-FILE-007, 1e400: ABI-FILE-009), ok for the good fixture, "1 passed, 6 failed"; nothing outside quoted',
    async run(ctx) {
      const outside = path.join(ctx.env.dir, 'outside.txt');
      writeFileSync(outside, MARKER);
      const { manifestPath } = await writeToolpack(path.join(ctx.env.dir, 'test-plugins'), {
        id: 'files.fixtures',
        dirName: 'pack',
        module: echoModule(),
        manifest: { health: { fixtures: 'fixtures' } },
      });
      const pack = path.dirname(manifestPath);
      const fx = path.join(pack, 'fixtures');
      mkdirSync(fx);
      execFileSync('mkfifo', [path.join(fx, 'a-pipe.json')]);
      symlinkSync(outside, path.join(fx, 'b-linked.json'));
      writeFileSync(path.join(fx, 'c-data.json'), JSON.stringify({ input: { x: '@data/../../../outside.txt' }, expect: { output: {} } }));
      symlinkSync(outside, path.join(pack, 'data-link.txt'));
      writeFileSync(path.join(fx, 'd-data-link.json'), JSON.stringify({ input: { x: '@data/../data-link.txt' }, expect: { output: {} } }));
      writeFileSync(path.join(fx, 'e-deep.json'), `{"input":{"x":${'['.repeat(100)}${']'.repeat(100)}},"expect":{"output":{}}}`);
      writeFileSync(path.join(fx, 'f-inf.json'), '{"input":{"x":1e400},"expect":{"output":{}}}');
      writeFileSync(path.join(fx, 'g-good.json'), JSON.stringify({ input: { n: 1 }, expect: { output: { n: 1 } } }));
      const r = await runHelix(['test', pack], {
        cwd: ctx.env.dir,
        env: { ...process.env, HELIX_HOME: path.join(ctx.env.dir, 'test-home') },
      });
      ctx.observe('helix_test_stdout', r.stdout.trim().split('\n'));
      ctx.observe('helix_test_ms', r.ms);
      expectExit(r, 1, 'helix test');
      const want: RegExp[] = [
        /^FAIL\s+files\.fixtures a-pipe\.json: .*FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)$/m,
        /^FAIL\s+files\.fixtures b-linked\.json: .*symbolic link to a place outside the toolpack directory.*\(ABI-FILE-002\)$/m,
        /^FAIL\s+files\.fixtures c-data\.json: .*leaves the toolpack directory.*\(ABI-FILE-001\)$/m,
        /^FAIL\s+files\.fixtures d-data-link\.json: .*resolves through a symbolic link/m,
        /^FAIL\s+files\.fixtures e-deep\.json: .*nested deeper than 64 levels/m,
        /^FAIL\s+files\.fixtures f-inf\.json: .*(infinity|finite)/m,
        /^ok\s+files\.fixtures g-good\.json/m,
        /1 passed, 6 failed \(7 fixtures, 1 toolpack\)/,
      ];
      for (const w of want) expect(w.test(r.stdout), `helix test printed no line matching ${String(w)}:\n${r.stdout}`);
      expectNoLeak(r.stdout + r.stderr, 'helix test');
    },
  },
  {
    id: 'files.helix-build-manifest',
    title: 'helix build refuses an alias-bomb manifest, a 50 MB manifest and a module path outside the pack before compiling',
    category: 'files',
    abi: ['ABI-FILE-012', 'ABI-FILE-013'],
    engines: ['helix'],
    expected:
      'helix build (child process) exits 1 for each, within 60 s: the bomb with its line and ABI-FILE-008, the size with the bound and ABI-FILE-005, `module: ../../outside.wasm` as leaving the toolpack directory; nothing is written outside the pack',
    async run(ctx) {
      const root = path.join(ctx.env.dir, 'build');
      const bomb = await writeToolpack(root, { id: 'files.build_bomb', dirName: 'bomb', module: echoModule() });
      appendFileSync(bomb.manifestPath, 'x:\n  a: &a [1, 1]\n  b: &b [*a, *a]\n  c: [*b, *b]\n');
      const big = await writeToolpack(root, { id: 'files.build_big', dirName: 'big', module: echoModule() });
      truncateSync(big.manifestPath, 50 * 1024 * 1024);
      const out = await writeToolpack(root, {
        id: 'files.build_out',
        dirName: 'out',
        module: echoModule(),
        manifest: { module: '../../outside.wasm' },
      });
      writeFileSync(
        path.join(path.dirname(out.manifestPath), 'asconfig.json'),
        JSON.stringify({ entries: ['assembly/index.ts'], options: { outFile: '../../outside.wasm' } }),
      );
      const cases: Array<[string, RegExp]> = [
        [
          path.dirname(bomb.manifestPath),
          /files_build_bomb\.tool\.yaml:\d+: x\.c\[0\]: alias \*b refers to a node that itself holds an alias.*\(ABI-FILE-008\)/,
        ],
        [path.dirname(big.manifestPath), /the manifest is 52428800 bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/],
        [path.dirname(out.manifestPath), /module \.\.\/\.\.\/outside\.wasm leaves the toolpack directory/],
      ];
      const runs = await Promise.all(cases.map(([dir]) => runHelix(['build', dir], { cwd: ctx.env.dir })));
      runs.forEach((r, i) => {
        const [dir, want] = cases[i]!;
        ctx.observe(`build ${path.basename(dir)}`, { code: r.code, ms: r.ms, stderr: r.stderr.trim().slice(0, 400) });
        expectExit(r, 1, `helix build ${path.basename(dir)}`);
        expect(want.test(r.stderr), `helix build ${path.basename(dir)} does not say ${String(want)}: ${r.stderr.slice(0, 500)}`);
        expectNoLeak(r.stderr + r.stdout, `helix build ${path.basename(dir)}`);
      });
      let written = true;
      try {
        readFileSync(path.join(ctx.env.dir, 'outside.wasm'));
      } catch {
        written = false;
      }
      expect(!written, 'helix build wrote outside.wasm outside the toolpack');
    },
  },
  {
    id: 'files.cli-refusals-quote-nothing',
    title:
      'helix validate, helix tools and helix call refuse a hostile pack naming each reference and rule, quoting no byte from outside or from a refused file',
    category: 'files',
    abi: ['ABI-FILE-013', 'ABI-FILE-001', 'ABI-FILE-002', 'ABI-FILE-005'],
    engines: ['helix'],
    expected:
      'validate exits 1 ("4 violations; the host would refuse to start"), tools --json and call exit 3 with nothing on stdout and "helix: P-PRECOND-MANIFEST-INVALID" on stderr; every stderr names ../outside.json, /proc/self/environ (link), the oversized schema and /etc/passwd with their rules, and holds neither marker (outside file, environment, the refused oversized file), no /etc/passwd line, no stack trace',
    async run(ctx) {
      outsideFile(ctx);
      const plugins = path.join(ctx.env.dir, 'cli-plugins');
      const { manifestPath } = await writeToolpack(plugins, {
        id: 'files.cli',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: {
          type: 'object',
          properties: { a: { $ref: '../../outside.json' }, b: { $ref: 'env.json' }, c: { $ref: 'big.json' } },
        },
        outputSchema: { $ref: '/etc/passwd' },
      });
      const pack = path.dirname(manifestPath);
      symlinkSync('/proc/self/environ', path.join(pack, 'env.json'));
      writeFileSync(path.join(pack, 'big.json'), `{"title":"${MARKER}","description":"${'q'.repeat(1_200_000)}"}`);
      const env = { ...process.env, HELIX_CONFORMANCE_ENV_MARKER: ENV_MARKER, HELIX_HOME: path.join(ctx.env.dir, 'cli-home') };
      const [validate, tools, call] = await Promise.all([
        runHelix(['validate', '--toolpacks', plugins], { cwd: ctx.env.dir, env }),
        runHelix(['tools', '--json', '--toolpacks', plugins], { cwd: ctx.env.dir, env }),
        runHelix(['call', 'files.cli', '--input', '{}', '--toolpacks', plugins], { cwd: ctx.env.dir, env }),
      ]);
      const refs = [
        /\$ref \.\.\/\.\.\/outside\.json leaves the toolpack directory.*\(ABI-FILE-001\)/,
        /\$ref env\.json resolves through a symbolic link.*\(ABI-FILE-002\)/,
        /\$ref big\.json is \d+ bytes, more than the bound.*\(ABI-FILE-005\)/,
        /\$ref \/etc\/passwd is an absolute path/,
      ];
      expectExit(validate, 1, 'helix validate');
      expect(/4 violations; the host would refuse to start/.test(validate.stderr), `helix validate: ${validate.stderr.slice(0, 600)}`);
      for (const [name, r] of [
        ['helix tools', tools],
        ['helix call', call],
      ] as const) {
        expectExit(r, 3, name);
        expect(r.stdout === '', `${name} printed on stdout: ${r.stdout.slice(0, 300)}`);
        expect(/^helix: P-PRECOND-MANIFEST-INVALID: 4 toolpack violations/.test(r.stderr), `${name}: ${r.stderr.slice(0, 400)}`);
      }
      for (const [name, r] of [
        ['helix validate', validate],
        ['helix tools', tools],
        ['helix call', call],
      ] as const) {
        for (const ref of refs) expect(ref.test(r.stderr), `${name} does not name ${String(ref)}: ${r.stderr.slice(0, 800)}`);
        expectNoLeak(r.stdout + r.stderr, name);
        ctx.observe(name, { code: r.code, ms: r.ms, stderr: r.stderr.trim().split('\n').slice(0, 8) });
      }
    },
  },
];
