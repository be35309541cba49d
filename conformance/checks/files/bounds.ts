// File checks of the bounds on what loading reads: sizes, nesting depth, YAML alias bombs, and
// YAML that is not JSON data, each refused at its place.
import { appendFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SCHEMA_FILES_MAX_COUNT } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { expectNoLeak, expectViolations, MARKER } from '../../kit/files-kit.js';
import { echoModule } from '../../kit/guest-wat.js';
import { writeToolpack } from '../../kit/toolpack.js';
import { BOMB, DEFAULT_POLICY_TEXT, manifestOf, refusedHost } from './shared.js';

/** The checks of this file, in the report's order. */
export const boundChecks: readonly Check[] = [
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
      const plugins = await ctx.toolpacksDir();
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
      const plugins = await ctx.toolpacksDir();
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
      const plugins = await ctx.toolpacksDir();
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
];
