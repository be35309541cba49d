// Conformance checks of toolpack manifests: two toolpacks of one id and version, a capability the
// host does not serve, and manifests whose fields, $refs or schemas are wrong, each refused at its
// place.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createHost } from '../../../host/5-host/host.js';
import { expect, type Check } from '../../check.js';
import { abiPrelude } from '../../kit/guest-wat.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { DEFAULT_LIMITS, writeToolpack } from '../../kit/toolpack.js';
import { checkDefaultPolicy } from '../../runner.js';

/** The checks of this file, in the report's order. */
export const manifestChecks: readonly Check[] = [
  {
    id: 'module.duplicate-id-version',
    title: 'Two toolpacks with the same id and version are refused; two versions of one id load and a range picks one',
    category: 'module',
    abi: ['ABI-LOAD-004', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'a toolpacks directory holding module.twin@1.0.0 twice is refused (P-PRECOND-MANIFEST-INVALID naming both files); with 1.0.0 and 2.0.0 the host serves, tool_version "^1" gets 1.0.0 and "^2" gets 2.0.0',
    packs: () => [
      { id: 'module.twin', module: fixedAnswer('one') },
      { id: 'module.twin', module: fixedAnswer('evil'), dirName: 'module.twin.copy' },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(
        lines,
        'naming the duplicate and both files',
        /duplicate tool module\.twin@1\.0\.0/,
        /also defined in .*module\.twin(\.copy)?\/module_twin\.tool\.yaml/,
      );
      // Two versions of the same id: a separate host over its own toolpacks directory.
      const root = path.join(ctx.env.dir, 'versions');
      mkdirSync(root);
      await writeToolpack(root, { id: 'module.twin', module: fixedAnswer('one') });
      await writeToolpack(root, {
        id: 'module.twin',
        module: fixedAnswer('two'),
        dirName: 'module.twin.v2',
        manifest: { version: '2.0.0' },
      });
      const policyFile = path.join(ctx.env.dir, 'versions-policy.json');
      writeFileSync(policyFile, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const host = await createHost({ toolpacksDir: root, policyFile, home: path.join(ctx.env.dir, 'home-versions') });
      ctx.defer(() => host.close());
      const one = await host.call({ tool_id: 'module.twin', tool_version: '^1', input: {} });
      const latest = await host.call({ tool_id: 'module.twin', tool_version: '^2', input: {} });
      expect(
        one.status === 'success' && (one.output as { v?: string }).v === 'one' && one.provenance.tool_version === '1.0.0',
        `tool_version ^1 answered ${JSON.stringify(one)}`,
      );
      expect(
        latest.status === 'success' && (latest.output as { v?: string }).v === 'two' && latest.provenance.tool_version === '2.0.0',
        `tool_version ^2 answered ${JSON.stringify(latest)}`,
      );
      ctx.observe('picked', { '^1': one.provenance.tool_version, '^2': latest.provenance.tool_version });
    },
  },
  {
    id: 'module.unknown-capability',
    title: 'A manifest allowing a capability the host does not serve is refused',
    category: 'module',
    abi: ['ABI-LOAD-005'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID at capabilities.allow naming net.raw_socket as a capability the host does not serve, and a wildcard fs.* as not a capability name',
    packs: (engine) => [
      engine.pack('module.wants_more', engine.guests.bare(), {
        capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'net.raw_socket'] },
      }),
      engine.pack('module.wildcard', engine.guests.bare(), { capabilities: { abiVersion: 1, allow: ['fs.*'] } }),
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for net.raw_socket', /capabilities\.allow/, /net\.raw_socket/);
      expectLine(lines, 'for the wildcard', /module_wildcard/, /capabilities\.allow\[0\]/);
      expect(
        !lines.some((l) => /module_wants_more.*capabilities\.allow\[0\]/.test(l)),
        `the served capability clock.now_unix (allow[0]) was refused: ${JSON.stringify(lines)}`,
      );
    },
  },
  {
    id: 'module.manifest-shape',
    title: 'Manifests with unknown fields, wrong types, remote and escaping $refs and bad schemas are refused, each at its place',
    category: 'module',
    abi: ['ABI-LOAD-002', 'ABI-LOAD-003', 'ABI-LOAD-006', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID listing: the unknown field and the string fuel (ABI-LOAD-002), a remote $ref and a $ref leaving the toolpack (ABI-LOAD-003), an inputSchema that is not an object, a misspelt type naming the JSON Schema types at its JSON pointer, and an unknown keyword naming the one it resembles (ABI-LOAD-006)',
    packs: (engine) => [
      { id: 'module.extra_field', module: engine.guests.bare(), manifest: { sneaky: true, limits: { ...DEFAULT_LIMITS, fuel: 'lots' } } },
      { id: 'module.remote_ref', module: engine.guests.bare(), inputSchema: { $ref: 'https://example.com/schema.json' } },
      { id: 'module.escape_ref', module: engine.guests.bare(), inputSchema: { $ref: '../../policy.yaml' } },
      { id: 'module.array_input', module: engine.guests.bare(), inputSchema: { type: 'array' } },
      { id: 'module.misspelt', module: engine.guests.bare(), inputSchema: { type: 'object', properties: { n: { type: 'integr' } } } },
      { id: 'module.keyword', module: engine.guests.bare(), inputSchema: { type: 'object', propertys: { n: { type: 'integer' } } } },
      {
        id: 'module.file_schema',
        module: engine.guests.bare(),
        inputSchema: { $ref: 'schemas/input.json' },
        extraFiles: { 'schemas/input.json': '{\n  "type": "object",\n  "properties": {\n    "sequence": { "type": "strin" }\n  }\n}\n' },
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the unknown field', /module_extra_field/, /sneaky/);
      expectLine(lines, 'for the string fuel', /module_extra_field/, /limits\.fuel|limits\/fuel|fuel/);
      expectLine(lines, 'for the remote $ref', /module_remote_ref/, /example\.com/);
      expectLine(lines, 'for the escaping $ref', /module_escape_ref/, /policy\.yaml/);
      expectLine(lines, 'for the array inputSchema', /module_array_input/, /inputSchema/, /object/);
      expectLine(
        lines,
        'for the misspelt type at its pointer',
        /module_misspelt/,
        /inputSchema\.properties\.n\.type/,
        /"integr"/,
        /integer/,
      );
      expectLine(lines, 'for the unknown keyword', /module_keyword/, /propertys/, /properties/);
      expectLine(lines, 'for the schema file at its line and pointer', /schemas\/input\.json:\d+/, /\/properties\/sequence\/type/);
      ctx.observe('violation_count', lines.length);
    },
  },
];

/** A helix/v1 module answering {"v": word}. */
function fixedAnswer(word: string): string {
  const text = `{"status":"ok","output":{"v":"${word}"}}`;
  return `(module ${abiPrelude()} (data (i32.const 16) "${text.replace(/"/g, '\\"')}")
  (func (export "execute") (param i32 i32) (result i64) (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const ${text.length}))))`;
}
