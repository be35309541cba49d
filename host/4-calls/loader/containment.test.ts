// The loader reads only what belongs to a toolpack (ABI-FILE-001..010), in process: each hostile
// layout is a listed violation that quotes nothing from outside, and good refs keep working.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MODULE_FILE_MAX_BYTES, PolicySchema, SCHEMA_FILES_MAX_COUNT } from '../../../abi/index.js';
import { echoModule } from '../../../test/helpers/guest-wat.js';
import { tempDir, writeToolpack, type ToolpackSpec } from '../../../test/helpers/toolpack.js';
import { loadToolpacks } from './load-toolpacks.js';
import { formatViolation } from '../../1-base/files/violation.js';

const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });
const MARKER = 'OUTSIDE-MARKER-4c1e';
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A toolpacks directory beside `outside.json` (holding MARKER); returns paths and a loader. */
async function world(spec: Partial<ToolpackSpec> = {}) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const outside = path.join(t.dir, 'outside.json');
  writeFileSync(outside, JSON.stringify({ type: 'object', title: MARKER }));
  const plugins = path.join(t.dir, 'plugins');
  const { manifestPath } = await writeToolpack(plugins, { id: 'box.tool', module: echoModule(), ...spec });
  const pack = path.dirname(manifestPath);
  const load = async () => {
    const result = await loadToolpacks(plugins, policy);
    const lines = result.violations.map(formatViolation);
    expect(lines.join('\n')).not.toContain(MARKER);
    return { ...result, lines };
  };
  return { root: t.dir, outside, plugins, pack, manifestPath, load };
}

function put(file: string, content: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
}

describe('the loader keeps $refs inside the toolpack', () => {
  it('refuses a relative ref that climbs out and an absolute one, naming the ref and the rule (ABI-FILE-001)', async () => {
    const w = await world({
      inputSchema: { $ref: '../../outside.json' },
      outputSchema: { type: 'object', properties: { a: { $ref: '/etc/passwd' } } },
    });
    const { tools, lines } = await w.load();
    expect(tools).toEqual([]);
    expect(lines).toEqual([
      expect.stringMatching(
        /box_tool\.tool\.yaml:\d+: inputSchema\.\$ref: \$ref \.\.\/\.\.\/outside\.json leaves the toolpack directory .*\(ABI-FILE-001\)$/,
      ),
      expect.stringMatching(
        /box_tool\.tool\.yaml:\d+: outputSchema\.properties\.a\.\$ref: \$ref \/etc\/passwd is an absolute path.*\(ABI-FILE-001\)$/,
      ),
    ]);
    expect(lines.join('\n')).not.toMatch(/root:/);
  });

  it('refuses a nested ref out of the pack, reported against the schema file that holds it', async () => {
    const w = await world({ inputSchema: { $ref: 'schemas/in.json' } });
    put(path.join(w.pack, 'schemas', 'in.json'), { type: 'object', properties: { x: { $ref: '../../../outside.json' } } });
    const { lines } = await w.load();
    expect(lines).toEqual([
      expect.stringMatching(
        /schemas\/in\.json:\d+: \/properties\/x\/\$ref: \$ref \.\.\/\.\.\/\.\.\/outside\.json leaves the toolpack directory/,
      ),
    ]);
  });

  it('refuses symlinks that escape the pack: to a file, to /proc/self/environ and through a directory (ABI-FILE-002)', async () => {
    const w = await world({ inputSchema: { $ref: 'schemas/link.json' }, outputSchema: { $ref: 'up/outside.json' } });
    mkdirSync(path.join(w.pack, 'schemas'));
    symlinkSync(w.outside, path.join(w.pack, 'schemas', 'link.json'));
    symlinkSync(w.root, path.join(w.pack, 'up'));
    const { lines } = await w.load();
    expect(lines).toHaveLength(2);
    for (const l of lines)
      expect(l).toMatch(/resolves through a symbolic link to a place outside the toolpack directory .*\(ABI-FILE-002\)$/);
    const env = await world({ inputSchema: { $ref: 'environ.json' } });
    symlinkSync('/proc/self/environ', path.join(env.pack, 'environ.json'));
    expect((await env.load()).lines).toEqual([expect.stringMatching(/\$ref environ\.json resolves through a symbolic link/)]);
  });

  it('refuses a FIFO and a device at once, without reading them (ABI-FILE-003)', async () => {
    const w = await world({ inputSchema: { $ref: 'pipe.json' }, outputSchema: { $ref: 'zero.json' } });
    execFileSync('mkfifo', [path.join(w.pack, 'pipe.json')]);
    symlinkSync('/dev/zero', path.join(w.pack, 'zero.json'));
    const { lines } = await w.load();
    expect(lines).toEqual([
      expect.stringMatching(/inputSchema\.\$ref: \$ref pipe\.json is a FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)/),
      expect.stringMatching(/outputSchema\.\$ref: \$ref zero\.json resolves through a symbolic link/),
    ]);
  });

  it('bounds each schema file, their number and their total size (ABI-FILE-005, -006)', async () => {
    const big = await world({ inputSchema: { $ref: 'big.json' } });
    put(path.join(big.pack, 'big.json'), `{"type":"object","description":"${'x'.repeat(1_100_000)}"}`);
    expect((await big.load()).lines).toEqual([
      expect.stringMatching(/\$ref big\.json is \d+ bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/),
    ]);

    const count = SCHEMA_FILES_MAX_COUNT + 1;
    const many = await world({
      inputSchema: {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { $ref: `s/${i}.json` }])),
      },
    });
    for (let i = 0; i < count; i++) put(path.join(many.pack, 's', `${i}.json`), { type: 'string' });
    expect((await many.load()).lines).toEqual([
      expect.stringMatching(
        /inputSchema\.properties\.p256\.\$ref: \$ref s\/256\.json would load more than 256 schema files.*\(ABI-FILE-006\)/,
      ),
    ]);

    const total = await world({
      inputSchema: {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`p${i}`, { $ref: `t${i}.json` }])),
      },
    });
    for (let i = 0; i < 5; i++) put(path.join(total.pack, `t${i}.json`), `{"description":"${'y'.repeat(1_000_000)}"}`);
    expect((await total.load()).lines).toEqual([
      expect.stringMatching(/\$ref t4\.json brings this toolpack's schema files past 4194304 bytes in total \(ABI-FILE-006\)/),
    ]);
  });

  it('refuses an alias bomb and deep nesting in a YAML schema file with its line (ABI-FILE-007, -008)', async () => {
    const w = await world({ inputSchema: { $ref: 'bomb.yaml' }, outputSchema: { $ref: 'deep.json' } });
    put(path.join(w.pack, 'bomb.yaml'), 'type: object\n$defs:\n  a: &a {type: string}\n  b: &b [*a, *a]\n  c: [*b, *b]\n');
    put(path.join(w.pack, 'deep.json'), `{"type":"object","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    const { lines } = await w.load();
    expect(lines).toEqual([
      expect.stringMatching(/bomb\.yaml:5: \/\$defs\/c\/0: alias \*b refers to a node that itself holds an alias/),
      expect.stringMatching(/deep\.json:1: -: nested deeper than 64 levels.*\(ABI-FILE-007\)/),
    ]);
  });

  it('still bundles refs inside the pack: nested, cyclic, YAML, through an inner symlink, shared by input and output', async () => {
    const w = await world({ inputSchema: { $ref: 'schemas/in.yaml' }, outputSchema: { $ref: 'schemas/node.json' } });
    put(path.join(w.pack, 'schemas', 'in.yaml'), 'type: object\nproperties:\n  n:\n    $ref: node.json\n  s:\n    $ref: same.json\n');
    put(path.join(w.pack, 'schemas', 'node.json'), { type: 'object', properties: { next: { $ref: 'node.json' }, v: { type: 'number' } } });
    symlinkSync('node.json', path.join(w.pack, 'schemas', 'same.json'));
    const { tools, violations } = await w.load();
    expect(violations).toEqual([]);
    expect(tools[0]!.validateInput({ n: { v: 1, next: { v: 2 } }, s: { v: 3 } })).toEqual([]);
    expect(tools[0]!.validateInput({ n: { v: 1, next: { v: 'x' } } })[0]?.path).toBe('/n/next/v');
    expect(tools[0]!.validateOutput({ v: 1, next: { v: 2 } })).toEqual([]);
  });
});

describe('the loader bounds the manifest and the other paths it names', () => {
  it('refuses a manifest over the bound before reading it, and a deep or non-finite one with its line (ABI-FILE-005, -007, -009)', async () => {
    const w = await world();
    truncateSync(w.manifestPath, 50 * 1024 * 1024);
    expect((await w.load()).lines).toEqual([
      expect.stringMatching(
        /box_tool\.tool\.yaml: -: the manifest is 52428800 bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/,
      ),
    ]);
    const inf = await world({ manifest: { timeoutMs: Infinity } });
    expect((await inf.load()).lines).toEqual([expect.stringMatching(/box_tool\.tool\.yaml:\d+: timeoutMs: \.inf is not a finite number/)]);
    const deep = await world();
    writeFileSync(deep.manifestPath, `id: box.tool\nx: ${'- '.repeat(50_000)}1\n`);
    expect((await deep.load()).lines).toEqual([expect.stringMatching(/box_tool\.tool\.yaml:2: -: nested deeper than 64 levels/)]);
  });

  it('refuses a module that leaves the pack through a symlink or is over the bound, and fixtures outside (ABI-FILE-002, -005)', async () => {
    const w = await world({ manifest: { health: { fixtures: '../../..' } } });
    const outsideModule = path.join(w.root, 'x.wasm');
    writeFileSync(outsideModule, 'not wasm');
    symlinkSync(outsideModule, path.join(w.pack, 'link.wasm'));
    writeFileSync(w.manifestPath, readFileSync(w.manifestPath, 'utf8').replace('module: tool.wasm', 'module: link.wasm'));
    const lines = (await w.load()).lines;
    expect(lines).toEqual([
      expect.stringMatching(/module: link\.wasm resolves through a symbolic link.*\(ABI-FILE-002\)/),
      expect.stringMatching(/health\.fixtures: \.\.\/\.\.\/\.\. leaves the toolpack directory/),
    ]);
    const huge = await world();
    const over = MODULE_FILE_MAX_BYTES + 1024 * 1024;
    truncateSync(path.join(huge.pack, 'tool.wasm'), over);
    expect((await huge.load()).lines).toEqual([
      expect.stringContaining(`module: tool.wasm is ${over} bytes, more than the bound of ${MODULE_FILE_MAX_BYTES} bytes (ABI-FILE-005)`),
    ]);
  });

  it('walks without following links: a linked or FIFO manifest is a violation, a link loop is passed over, depth is bounded (ABI-FILE-010)', async () => {
    const w = await world();
    symlinkSync(w.manifestPath, path.join(w.plugins, 'linked.tool.yaml'));
    execFileSync('mkfifo', [path.join(w.plugins, 'pipe.tool.yaml')]);
    symlinkSync('.', path.join(w.pack, 'loop'));
    symlinkSync(w.root, path.join(w.plugins, 'escape'));
    let deep = w.plugins;
    for (let i = 0; i < 18; i++) deep = path.join(deep, `d${i}`);
    mkdirSync(deep, { recursive: true });
    const { tools, lines } = await w.load();
    expect(tools).toHaveLength(1);
    expect(lines).toEqual([
      expect.stringMatching(
        /plugins\/d0\/.*\/d15: -: directories nested more than 16 levels below the toolpacks directory are not searched \(ABI-FILE-010\)/,
      ),
      expect.stringMatching(/linked\.tool\.yaml: -: a manifest must be a regular file, and this is a symbolic link/),
      expect.stringMatching(/pipe\.tool\.yaml: -: a manifest must be a regular file, and this is a FIFO/),
    ]);
  });
});
