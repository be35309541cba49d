// Conformance checks: toolpack and policy files. Loading reads only what belongs to the toolpack,
// only regular files, within size, depth and alias bounds, as JSON data; every refusal names the
// reference as written and the rule, and quotes nothing from outside (ABI-FILE-001..013).
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isHelixError, PolicySchema, SCHEMA_FILES_MAX_COUNT } from '../../abi/index.js';
import { createHost } from '../../host/5-host/host.js';
import { loadToolpacks } from '../../host/4-calls/loader/load-toolpacks.js';
import { formatViolation } from '../../host/1-base/files/violation.js';
import { CheckFailure, expect, expectOutcome, expectSuccess, type Check, type CheckContext } from '../check.js';
import { ENV_MARKER, expectExit, expectNoLeak, expectViolations, MARKER, outsideFile, runHelix, swapper } from '../kit/files-kit.js';
import { echoModule } from '../kit/guest-wat.js';
import { writeToolpack } from '../kit/toolpack.js';

/** Where the kit writes the manifest of a pack with this id and directory. */
const manifestOf = (plugins: string, dirName: string, id: string): string =>
  path.join(plugins, dirName, `${id.replace(/\./g, '_')}.tool.yaml`);

/** The environment marker in this process's environment (so /proc/self/environ holds it) while the check runs. */
function markEnvironment(ctx: CheckContext): void {
  process.env.HELIX_CONFORMANCE_ENV_MARKER = ENV_MARKER;
  ctx.defer(() => void delete process.env.HELIX_CONFORMANCE_ENV_MARKER);
}

/** Starts a host over `plugins` (with `policyFile` or the default policy) expecting a refusal; returns it. */
async function refusedHost(
  ctx: CheckContext,
  plugins: string,
  policyFile?: string,
): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const t0 = performance.now();
  try {
    const h = await createHost({
      pluginsDir: plugins,
      home: path.join(ctx.env.dir, `home-${path.basename(plugins)}`),
      warn: () => undefined,
      ...(policyFile === undefined ? {} : { policyFile }),
    });
    await h.close();
  } catch (e) {
    if (!isHelixError(e))
      throw new CheckFailure(`loading ended in an internal error, not a refusal: ${e instanceof Error ? e.stack : String(e)}`);
    ctx.note(`refused in ${Math.round(performance.now() - t0)} ms: ${e.code}: ${e.message}`);
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new CheckFailure(`the host over ${plugins} started; it had to refuse`);
}

const DEFAULT_POLICY_TEXT = 'version: 1\ntools:\n  allow: ["*"]\n';

/** Nine levels of nine aliases each of the one before: 9^9 values when expanded. */
const BOMB = [
  'x-bomb:',
  '  a: &a [x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 8 }, (_, i) => `  ${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
].join('\n');

export const fileChecks: readonly Check[] = [
  {
    id: 'files.ref-traversal',
    title: '$refs and a module path that climb out of the toolpack or are absolute are refused without being opened',
    category: 'files',
    abi: ['ABI-FILE-001', 'ABI-FILE-013', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'the host refuses to start with P-PRECOND-MANIFEST-INVALID listing every violation: ../ and absolute $refs (also one nested in a schema file) and a module path ../.. each named as written with ABI-FILE-001; no byte of outside.json, /etc/passwd or /proc/self/environ quoted',
    packs: () => [
      {
        id: 'files.refs',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: { $ref: '../../outside.json' },
        outputSchema: {
          type: 'object',
          properties: { a: { $ref: '/etc/passwd' }, b: { $ref: '/proc/self/environ' }, c: { $ref: 'schemas/in.json' } },
        },
        extraFiles: { 'schemas/in.json': JSON.stringify({ type: 'object', properties: { x: { $ref: '../../../outside.json' } } }) },
      },
      { id: 'files.module_out', dirName: 'pack2', module: echoModule(), manifest: { module: '../../outside.wasm' } },
    ],
    async run(ctx) {
      markEnvironment(ctx);
      outsideFile(ctx);
      writeFileSync(path.join(ctx.env.dir, 'outside.wasm'), MARKER);
      const refusal = await ctx.refusedStart();
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /inputSchema\.\$ref: \$ref \.\.\/\.\.\/outside\.json leaves the toolpack directory.*\(ABI-FILE-001\)/,
        /outputSchema\.properties\.a\.\$ref: \$ref \/etc\/passwd is an absolute path.*\(ABI-FILE-001\)/,
        /outputSchema\.properties\.b\.\$ref: \$ref \/proc\/self\/environ is an absolute path/,
        /schemas\/in\.json:\d+: \/properties\/x\/\$ref: \$ref \.\.\/\.\.\/\.\.\/outside\.json leaves the toolpack directory/,
        /module: \.\.\/\.\.\/outside\.wasm leaves the toolpack directory/,
      ]);
      expect(lines.length === 5, `expected exactly the 5 violations, got ${lines.length}: ${JSON.stringify(lines)}`);
      ctx.observe('violations', lines);
    },
  },
  {
    id: 'files.symlink-escape',
    title: 'Symbolic links inside a toolpack that lead out of it (file, directory, /proc/self/environ, module) are refused',
    category: 'files',
    abi: ['ABI-FILE-002', 'ABI-FILE-013'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with one ABI-FILE-002 violation per escaping link (a schema linked to a file outside, a schema reached through a linked directory, a schema linked to /proc/self/environ, a module linked outside); a link that stays inside the pack is followed without a violation; nothing outside is quoted',
    packs: () => [
      {
        id: 'files.links',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: {
          type: 'object',
          properties: { a: { $ref: 'schemas/link.json' }, b: { $ref: 'up/outside.json' }, c: { $ref: 'schemas/same.json' } },
        },
        outputSchema: { $ref: 'environ.json' },
        extraFiles: { 'schemas/real.json': JSON.stringify({ type: 'string' }) },
      },
      { id: 'files.linked_module', dirName: 'pack2', module: echoModule(), manifest: { module: 'link.wasm' } },
    ],
    async run(ctx) {
      markEnvironment(ctx);
      const outside = outsideFile(ctx);
      const plugins = await ctx.pluginsDir();
      const pack = path.join(plugins, 'pack');
      symlinkSync(outside, path.join(pack, 'schemas', 'link.json'));
      symlinkSync(ctx.env.dir, path.join(pack, 'up'));
      symlinkSync('real.json', path.join(pack, 'schemas', 'same.json'));
      symlinkSync('/proc/self/environ', path.join(pack, 'environ.json'));
      writeFileSync(path.join(ctx.env.dir, 'outside.wasm'), MARKER);
      symlinkSync(path.join(ctx.env.dir, 'outside.wasm'), path.join(plugins, 'pack2', 'link.wasm'));
      const refusal = await ctx.refusedStart();
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /\$ref schemas\/link\.json resolves through a symbolic link to a place outside the toolpack directory.*\(ABI-FILE-002\)/,
        /\$ref up\/outside\.json resolves through a symbolic link.*\(ABI-FILE-002\)/,
        /\$ref environ\.json resolves through a symbolic link.*\(ABI-FILE-002\)/,
        /module: link\.wasm resolves through a symbolic link.*\(ABI-FILE-002\)/,
      ]);
      expect(!lines.some((l) => l.includes('same.json')), `the link inside the pack was refused: ${JSON.stringify(lines)}`);
      expect(lines.length === 4, `expected exactly 4 violations, got ${JSON.stringify(lines)}`);
      ctx.observe('violations', lines);
    },
  },
  {
    id: 'files.special-files',
    title: 'A FIFO, a device node and a directory named as schema or module are refused from their type, at once',
    category: 'files',
    abi: ['ABI-FILE-003'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID naming a FIFO schema, a character-device schema (a /dev/zero node made inside the pack), a directory schema and a FIFO module, each "not a regular file"; the start is refused within 10 s (no FIFO waited on)',
    packs: () => [
      {
        id: 'files.special',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: { $ref: 'pipe.json' },
        outputSchema: { type: 'object', properties: { z: { $ref: 'zero.json' }, d: { $ref: 'schemas' } } },
        extraFiles: { 'schemas/x.json': '{}' },
      },
      { id: 'files.fifo_module', dirName: 'pack2', module: echoModule(), manifest: { module: 'mod.wasm' } },
    ],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      const pack = path.join(plugins, 'pack');
      execFileSync('mkfifo', [path.join(pack, 'pipe.json')]);
      execFileSync('mkfifo', [path.join(plugins, 'pack2', 'mod.wasm')]);
      let device = true;
      try {
        execFileSync('mknod', [path.join(pack, 'zero.json'), 'c', '1', '5'], { stdio: 'ignore' });
      } catch {
        // Without CAP_MKNOD a device node cannot be made here: a link to /dev/zero stands in (refused as a link out, ABI-FILE-002).
        device = false;
        symlinkSync('/dev/zero', path.join(pack, 'zero.json'));
        ctx.note('mknod was refused: zero.json is a link to /dev/zero instead of a device node');
      }
      const t0 = performance.now();
      const refusal = await ctx.refusedStart();
      const ms = Math.round(performance.now() - t0);
      ctx.observe('refused_after_ms', ms);
      expect(ms < 10_000, `the refusal took ${ms} ms: something waited on a FIFO or read a device`);
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /\$ref pipe\.json is a FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)/,
        device ? /\$ref zero\.json is a character device, not a regular file/ : /\$ref zero\.json resolves through a symbolic link/,
        /\$ref schemas is a directory/,
        /module: mod\.wasm is a FIFO/,
      ]);
      ctx.observe('violations', lines);
    },
  },
  {
    id: 'files.swap-race',
    title: 'A schema file swapped back and forth with a link to a file outside, while hosts load the pack, is never read through the link',
    category: 'files',
    abi: ['ABI-FILE-004', 'ABI-FILE-002', 'ABI-FILE-013'],
    engines: ['helix'],
    expected:
      'over repeated loads while another process swaps schemas/in.json between a regular file and a link to outside.json: every load either bundles the inside schema or is refused with an ABI-FILE-002/-004 violation; no loaded schema and no refusal ever holds a byte of outside.json',
    async run(ctx) {
      const outside = outsideFile(ctx);
      const plugins = path.join(ctx.env.dir, 'race-plugins');
      const { manifestPath } = await writeToolpack(plugins, {
        id: 'files.race',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: { $ref: 'in.json' },
      });
      const target = path.join(path.dirname(manifestPath), 'in.json');
      const inside = JSON.stringify({ type: 'object', title: 'inside', properties: { inside: { type: 'string' } } });
      writeFileSync(target, inside);
      const swap = swapper(target, inside, outside, 12_000);
      ctx.defer(() => swap.stop());
      const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });
      const outcomes: Record<string, number> = { loaded: 0, refused_link: 0, refused_swapped: 0, refused_other: 0 };
      const others: string[] = [];
      // At least 3 s and 10 loads, at most 10 s: a busy machine loads slowly.
      const soft = Date.now() + 3000;
      const hard = Date.now() + 10_000;
      let loads = 0;
      while ((Date.now() < soft || loads < 10) && Date.now() < hard) {
        loads += 1;
        // The loader a host start runs (createHost's loadPluginsOrThrow), without a store to open each time.
        const result = await loadToolpacks(plugins, policy);
        const lines = result.violations.map(formatViolation);
        const seen = JSON.stringify(result.tools.map((t) => [t.inputSchema, t.outputSchema])) + lines.join('\n');
        if (seen.includes(MARKER)) throw new CheckFailure(`load ${loads} read the outside file: ${seen.slice(0, 600)}`);
        if (result.tools.length === 1 && lines.length === 0) outcomes.loaded! += 1;
        else if (lines.length === 1 && /ABI-FILE-002/.test(lines[0]!)) outcomes.refused_link! += 1;
        else if (lines.length === 1 && /ABI-FILE-004/.test(lines[0]!)) outcomes.refused_swapped! += 1;
        else {
          outcomes.refused_other! += 1;
          if (others.length < 5) others.push(lines.join(' | '));
        }
      }
      await swap.stop();
      ctx.observe('loads', loads);
      ctx.observe('outcomes', outcomes);
      if (others.length > 0) ctx.observe('other_refusals', others);
      expect(loads >= 5, `only ${loads} loads in 10 s`);
      expect(outcomes.refused_link! + outcomes.refused_swapped! > 0, 'the link was never seen: the race did not happen');
      for (const o of others) {
        expect(/does not exist|ABI-FILE-00[1-4]/.test(o), `a load ended in an unexpected refusal: ${o}`);
        expectNoLeak(o, 'a refusal during the race');
      }
    },
  },
  {
    id: 'files.size-bounds',
    title: 'Oversized manifest, schema, module and policy, and too many or too large $ref files, are refused before they are read',
    category: 'files',
    abi: ['ABI-FILE-005', 'ABI-FILE-006'],
    engines: ['helix'],
    expected: `P-PRECOND-MANIFEST-INVALID naming a 50 MB manifest (bound 1 MiB), a 1.1 MB schema (1 MiB), a 33 MiB module (32 MiB), ${SCHEMA_FILES_MAX_COUNT + 1} schema files (bound ${SCHEMA_FILES_MAX_COUNT}) and 5 x 1 MB schema files (4 MiB in total); a 2 MB policy is P-PRECOND-POLICY-INVALID (1 MiB); each refusal within 10 s`,
    packs: () => [
      { id: 'files.big_manifest', dirName: 'p1', module: echoModule() },
      {
        id: 'files.big_schema',
        dirName: 'p2',
        module: echoModule(),
        inputSchema: { $ref: 'big.json' },
        extraFiles: { 'big.json': `{"type":"object","description":"${'x'.repeat(1_100_000)}"}` },
      },
      { id: 'files.big_module', dirName: 'p3', module: echoModule() },
      {
        id: 'files.many_schemas',
        dirName: 'p4',
        module: echoModule(),
        inputSchema: {
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: SCHEMA_FILES_MAX_COUNT + 1 }, (_, i) => [`p${i}`, { $ref: `s/${i}.json` }])),
        },
        extraFiles: Object.fromEntries(Array.from({ length: SCHEMA_FILES_MAX_COUNT + 1 }, (_, i) => [`s/${i}.json`, '{"type":"string"}'])),
      },
      {
        id: 'files.total_schemas',
        dirName: 'p5',
        module: echoModule(),
        inputSchema: {
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`p${i}`, { $ref: `t${i}.json` }])),
        },
        extraFiles: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`t${i}.json`, `{"description":"${'y'.repeat(1_000_000)}"}`])),
      },
    ],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      const bigManifest = manifestOf(plugins, 'p1', 'files.big_manifest');
      appendFileSync(bigManifest, `# ${MARKER}\n`);
      truncateSync(bigManifest, 50 * 1024 * 1024);
      truncateSync(path.join(plugins, 'p3', 'tool.wasm'), 33 * 1024 * 1024);
      const t0 = performance.now();
      const refusal = await ctx.refusedStart();
      ctx.observe('refused_after_ms', Math.round(performance.now() - t0));
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /files_big_manifest\.tool\.yaml: -: the manifest is 52428800 bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/,
        /\$ref big\.json is \d+ bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/,
        /module: tool\.wasm is 34603008 bytes, more than the bound of 33554432 bytes \(ABI-FILE-005\)/,
        /\$ref s\/256\.json would load more than 256 schema files.*\(ABI-FILE-006\)/,
        /\$ref t4\.json brings this toolpack's schema files past 4194304 bytes in total \(ABI-FILE-006\)/,
      ]);
      ctx.observe('violations', lines);
      const policyFile = path.join(ctx.env.dir, 'big.policy.yaml');
      writeFileSync(policyFile, `${DEFAULT_POLICY_TEXT}# ${MARKER}\n${`# ${'z'.repeat(98)}\n`.repeat(20_000)}`);
      const policyRefusal = await refusedHost(ctx, path.join(plugins, 'p2'), policyFile);
      expect(
        policyRefusal.code === 'P-PRECOND-POLICY-INVALID',
        `the 2 MB policy was refused with ${policyRefusal.code}: ${policyRefusal.message}`,
      );
      const text = `${policyRefusal.message} ${JSON.stringify(policyRefusal.details)}`;
      expect(
        /more than the bound of 1048576 bytes/.test(text) && /ABI-FILE-005/.test(text),
        `the policy refusal does not give the bound and the rule: ${text.slice(0, 500)}`,
      );
      expectNoLeak(text, 'the policy refusal');
    },
  },
  {
    id: 'files.deep-nesting',
    title: 'Manifest, schema files and policy nested 100,000 levels deep (flow, block, JSON, through an alias) are refused with their line',
    category: 'files',
    abi: ['ABI-FILE-007'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with "nested deeper than 64 levels (ABI-FILE-007)" and the line for: a manifest with 100,000 flow brackets, a JSON schema with 10,000 nested arrays, a YAML schema of 1,000 block levels, a YAML schema whose alias puts a 63-level node 2 levels down; a deep policy is P-PRECOND-POLICY-INVALID; no stack overflow',
    packs: () => [
      { id: 'files.deep_manifest', dirName: 'p1', module: echoModule() },
      {
        id: 'files.deep_schemas',
        dirName: 'p2',
        module: echoModule(),
        inputSchema: { type: 'object', properties: { a: { $ref: 'deep.json' }, b: { $ref: 'block.yaml' } } },
        outputSchema: { $ref: 'alias.yaml' },
        extraFiles: {
          'deep.json': `{"type":"object","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
          'block.yaml': `type: object\n${Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} 1\n`,
          'alias.yaml': `type: object\nx-a: &a ${'['.repeat(63)}1${']'.repeat(63)}\nx-b: [[*a]]\n`,
        },
      },
    ],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      appendFileSync(manifestOf(plugins, 'p1', 'files.deep_manifest'), `x-deep: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
      const refusal = await ctx.refusedStart();
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /files_deep_manifest\.tool\.yaml:\d+: -: nested deeper than 64 levels.*\(ABI-FILE-007\)/,
        /deep\.json:1: -: nested deeper than 64 levels/,
        /block\.yaml:\d+: .*nested deeper than 64 levels/,
        /alias\.yaml:3: .*nested deeper than 64 levels/,
      ]);
      ctx.observe('violations', lines);
      const policyFile = path.join(ctx.env.dir, 'deep.policy.yaml');
      writeFileSync(policyFile, `${DEFAULT_POLICY_TEXT}x: ${'- '.repeat(50_000)}1\n`);
      const p = await refusedHost(ctx, path.join(ctx.env.dir, 'no-plugins'), policyFile);
      expect(
        p.code === 'P-PRECOND-POLICY-INVALID' && /:4: .*nested deeper than 64 levels/.test(`${p.message} ${JSON.stringify(p.details)}`),
        `the deep policy: ${p.code}: ${p.message} ${JSON.stringify(p.details).slice(0, 400)}`,
      );
    },
  },
  {
    id: 'files.alias-bombs',
    title:
      'YAML alias bombs, nested and self-referring aliases, over 100 aliases and a 1.2-million-value expansion are refused with their line',
    category: 'files',
    abi: ['ABI-FILE-008'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID naming, with file and line: a billion-laughs manifest (alias *b refers to a node that itself holds an alias), a schema with 101 aliases, a schema whose alias names the node containing it, a schema expanding past 1,000,000 values; the same bomb in a policy is P-PRECOND-POLICY-INVALID; bounded time and memory',
    packs: () => [
      { id: 'files.bomb', dirName: 'p1', module: echoModule() },
      {
        id: 'files.alias_schemas',
        dirName: 'p2',
        module: echoModule(),
        inputSchema: { type: 'object', properties: { a: { $ref: 'many.yaml' }, b: { $ref: 'self.yaml' }, c: { $ref: 'wide.yaml' } } },
        extraFiles: {
          'many.yaml': `type: object\nx-a: &a 1\nx-b: [${Array(101).fill('*a').join(', ')}]\n`,
          'self.yaml': 'type: object\nx-a: &a [1, *a]\n',
          'wide.yaml': `type: object\nx-a: &a [${Array(20_000).fill('1').join(',')}]\nx-b: [${Array(60).fill('*a').join(',')}]\n`,
        },
      },
    ],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      appendFileSync(manifestOf(plugins, 'p1', 'files.bomb'), `${BOMB}\n`);
      ctx.show({ label: 'alias bomb appended to the manifest and the policy', lang: 'yaml', text: BOMB });
      const t0 = performance.now();
      const refusal = await ctx.refusedStart();
      ctx.observe('refused_after_ms', Math.round(performance.now() - t0));
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /files_bomb\.tool\.yaml:\d+: x-bomb\.c\[0\]: alias \*b refers to a node that itself holds an alias.*\(ABI-FILE-008\)/,
        /many\.yaml:3: .*more than 100 YAML aliases \(ABI-FILE-008\)/,
        /self\.yaml:2: .*alias \*a refers to a node that contains it/,
        /wide\.yaml:3: .*more than 1000000 values.*\(ABI-FILE-008\)/,
      ]);
      ctx.observe('violations', lines);
      const policyFile = path.join(ctx.env.dir, 'bomb.policy.yaml');
      writeFileSync(policyFile, `${DEFAULT_POLICY_TEXT}${BOMB}\n`);
      const p = await refusedHost(ctx, path.join(ctx.env.dir, 'no-plugins'), policyFile);
      const text = `${p.message} ${JSON.stringify(p.details)}`;
      expect(
        p.code === 'P-PRECOND-POLICY-INVALID' &&
          /bomb\.policy\.yaml:\d+: x-bomb\.c\[0\]: alias \*b refers to a node that itself holds an alias/.test(text),
        `the policy bomb: ${p.code}: ${text.slice(0, 500)}`,
      );
    },
  },
  {
    id: 'files.non-json-yaml',
    title:
      'YAML that is not JSON data (sets, binary, timestamps, merge keys, .inf, 1e400, collection keys) is refused; YAML 1.1 is read as 1.2 core',
    category: 'files',
    abi: ['ABI-FILE-009'],
    engines: ['helix'],
    expected:
      'a pack with !!set, !!binary, !!timestamp, .inf, a JSON 1e400 and a collection key is refused (P-PRECOND-MANIFEST-INVALID), each with its path and line, and a manifest merge key `<<` is a plain key ("<<: unknown field"), not a merge; a %YAML 1.1 schema whose const is `on` loads and the host then accepts {"flag":"on"} and refuses {"flag":true} with I-REQ-INPUT (1.2 core: `on` is a string)',
    packs: () => [
      {
        id: 'files.yaml11',
        module: echoModule(),
        inputSchema: { $ref: 'in.yaml' },
        extraFiles: {
          'in.yaml':
            '%YAML 1.1\n---\ntype: object\nrequired: [flag]\nproperties:\n  flag:\n    const: on\n  when:\n    const: 2001-12-14\n',
        },
      },
    ],
    async run(ctx) {
      const bad = path.join(ctx.env.dir, 'bad-plugins');
      const { manifestPath } = await writeToolpack(bad, {
        id: 'files.nonjson',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: {
          type: 'object',
          properties: Object.fromEntries(
            ['set', 'binary', 'time', 'big', 'key'].map((k) => [k, { $ref: `${k}.${k === 'big' ? 'json' : 'yaml'}` }]),
          ),
        },
      });
      const pack = path.dirname(manifestPath);
      const files: Record<string, string> = {
        'set.yaml': 'type: object\nproperties: !!set {secret, token}\n',
        'binary.yaml': 'type: string\nconst: !!binary aGVsaXg=\n',
        'time.yaml': 'type: string\nconst: !!timestamp 2001-12-14\n',
        'big.json': '{\n  "type": "number",\n  "maximum": 1e400\n}',
        'key.yaml': 'type: object\n? [a, b]\n: 1\n',
      };
      for (const [name, text] of Object.entries(files)) writeFileSync(path.join(pack, name), text);
      const inf = await writeToolpack(bad, { id: 'files.inf', dirName: 'pack2', module: echoModule() });
      appendFileSync(inf.manifestPath, 'x-inf: .inf\n');
      // A merge key is a plain key under the 1.2 core schema: it merges nothing, and the manifest has no field "<<".
      const merge = await writeToolpack(bad, { id: 'files.merge', dirName: 'pack3', module: echoModule() });
      appendFileSync(merge.manifestPath, '<<: {timeoutMs: 10}\n');
      ctx.show({
        label: 'the non-JSON schema files',
        lang: 'yaml',
        text: Object.entries(files)
          .map(([n, t]) => `# ${n}\n${t}`)
          .join('\n'),
      });
      const refusal = await refusedHost(ctx, bad);
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /\.tool\.yaml:\d+: x-inf: \.inf is not a finite number.*\(ABI-FILE-009\)/,
        /set\.yaml:2: \/properties: .*YAML set \(!!set\), which JSON cannot represent \(ABI-FILE-009\)/,
        /binary\.yaml:2: \/const: holds a value JSON cannot represent/,
        /time\.yaml:2: \/const: holds a value JSON cannot represent/,
        /big\.json:3: .*maximum.*infinity/,
        /key\.yaml:\d+: .*key must be a plain scalar/,
        /files_merge\.tool\.yaml:\d+: <<: unknown field/,
      ]);
      ctx.observe('violations', lines);
      expectSuccess(await ctx.call('files.yaml11', { flag: 'on', when: '2001-12-14' }));
      const refused = await ctx.call('files.yaml11', { flag: true });
      expectOutcome(refused, 'invalid_request', 'I-REQ-INPUT');
    },
  },
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
      const plugins = await ctx.pluginsDir();
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
        /d15: -: directories nested more than 16 levels below the plugins directory are not searched \(ABI-FILE-010\)/,
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
        runHelix(['validate', '--plugins', plugins], { cwd: ctx.env.dir, env }),
        runHelix(['tools', '--json', '--plugins', plugins], { cwd: ctx.env.dir, env }),
        runHelix(['call', 'files.cli', '--input', '{}', '--plugins', plugins], { cwd: ctx.env.dir, env }),
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
