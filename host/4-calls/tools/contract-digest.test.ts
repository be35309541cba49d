import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ToolManifestSchema, type ToolManifestInput } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { loadToolpacksOrThrow } from '../loader/load-toolpacks.js';
import { packageRoot } from '../../1-base/paths.js';
import { loadPolicy } from '../policy/load-policy.js';
import { contractDigest, toolContract, withoutAnnotations } from './contract-digest.js';

const MANIFEST: ToolManifestInput = {
  id: 'seq.filter',
  version: '1.0.0',
  contractVersion: 'v1',
  description: 'Filters reads.',
  abi: 'helix/v1',
  module: 'build/filter.wasm',
  digest: `sha256:${'a'.repeat(64)}`,
  deterministic: 'idempotent',
  timeoutMs: 60_000,
  limits: { maxInputBytes: 4096, maxOutputBytes: 16_384, fuel: 1_000_000, maxMemoryPages: 64, maxCapabilityCalls: 100 },
  capabilities: { abiVersion: 1, allow: ['artifact.read', 'artifact.write', 'secrets.get.token'], network: [] },
  inputSchema: { $ref: 'schemas/input.json' },
  outputSchema: { $ref: 'schemas/output.json' },
  declaredOutputs: [{ role: 'filtered', type: 'fastq', label: 'filtered reads' }],
  health: { fixtures: 'fixtures' },
};
const INPUT = {
  title: 'input',
  description: 'A FASTQ artifact.',
  type: 'object',
  required: ['reads'],
  properties: { reads: { type: 'string', 'x-helix-artifact': true, description: 'An artifact id.' }, min: { type: 'integer', minimum: 0 } },
};
const OUTPUT = { type: 'object', properties: { kept: { type: 'integer' } } };

type Edit = (m: ToolManifestInput) => ToolManifestInput;
const digestOf = (edit: Edit = (m) => m, input: Record<string, unknown> = INPUT, output: Record<string, unknown> = OUTPUT): string =>
  contractDigest(ToolManifestSchema.parse(edit(structuredClone(MANIFEST))), input, output);
const limits =
  (patch: Record<string, number>): Edit =>
  (m) => ({ ...m, limits: { ...m.limits, ...patch } });
const caps =
  (patch: Record<string, unknown>): Edit =>
  (m) => ({ ...m, capabilities: { ...m.capabilities!, ...patch } as ToolManifestInput['capabilities'] });

describe('contractDigest', () => {
  const base = digestOf();

  it('is a sha256 digest, the same for the same manifest and schemas', () => {
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digestOf()).toBe(base);
  });

  it('changes with every field that can change what a call does', () => {
    const edits: Record<string, Edit> = {
      'allowlist entry removed': caps({ allow: ['artifact.write', 'secrets.get.token'] }),
      'allowlist scope changed': caps({ allow: ['artifact.read', 'artifact.write', 'secrets.get.other'] }),
      'network origin added': caps({ network: ['https://api.example.org:443'] }),
      'declared output type': (m) => ({ ...m, declaredOutputs: [{ role: 'filtered', type: 'fasta', label: 'filtered reads' }] }),
      'declared output role': (m) => ({ ...m, declaredOutputs: [{ role: 'kept', type: 'fastq', label: 'filtered reads' }] }),
      'declared output label': (m) => ({ ...m, declaredOutputs: [{ role: 'filtered', type: 'fastq', label: 'kept reads' }] }),
      'declared output added': (m) => ({ ...m, declaredOutputs: [...m.declaredOutputs!, { role: 'report', type: 'json' }] }),
      fuel: limits({ fuel: 1_000_001 }),
      'memory pages': limits({ maxMemoryPages: 65 }),
      'output bytes': limits({ maxOutputBytes: 16_385 }),
      'input bytes': limits({ maxInputBytes: 4097 }),
      'capability calls': limits({ maxCapabilityCalls: 101 }),
      deterministic: (m) => ({ ...m, deterministic: 'pure' }),
      entrypoint: (m) => ({ ...m, entrypoint: 'run' }),
      abi: (m) => ({ ...m, abi: 'extism/v1' }),
      'module digest': (m) => ({ ...m, digest: `sha256:${'b'.repeat(64)}` }),
      version: (m) => ({ ...m, version: '1.0.1' }),
      'contract version': (m) => ({ ...m, contractVersion: 'v2' }),
    };
    const digests = Object.entries(edits).map(([what, edit]) => [what, digestOf(edit)] as const);
    for (const [what, d] of digests) expect(d, what).not.toBe(base);
    expect(new Set(digests.map(([, d]) => d)).size).toBe(digests.length);
  });

  it('changes with the content of either schema, wherever it came from', () => {
    expect(digestOf(undefined, { ...INPUT, required: ['reads', 'min'] })).not.toBe(base);
    expect(digestOf(undefined, { ...INPUT, properties: { ...INPUT.properties, min: { type: 'integer', minimum: 1 } } })).not.toBe(base);
    expect(digestOf(undefined, INPUT, { ...OUTPUT, required: ['kept'] })).not.toBe(base);
    expect(digestOf(undefined, { ...INPUT, properties: { ...INPUT.properties, reads: { type: 'string' } } }), 'x-helix-artifact').not.toBe(
      base,
    );
  });

  it('ignores what is only descriptive: description, health, module path, deadline, schema annotations, allowlist order', () => {
    const same: Record<string, Edit> = {
      description: (m) => ({ ...m, description: 'Keeps the good reads.' }),
      health: (m) => ({ ...m, health: { fixtures: 'other-fixtures' } }),
      'no health': ({ health: _health, ...m }) => m,
      module: (m) => ({ ...m, module: 'out/filter.wasm' }),
      timeoutMs: (m) => ({ ...m, timeoutMs: 1000 }),
      'allowlist order and repeats': caps({ allow: ['secrets.get.token', 'artifact.write', 'artifact.read', 'artifact.read'] }),
      'entrypoint written out': (m) => ({ ...m, entrypoint: 'execute' }),
    };
    for (const [what, edit] of Object.entries(same)) expect(digestOf(edit), what).toBe(base);
    const annotated = {
      ...INPUT,
      title: 'other',
      description: 'other',
      $comment: 'x',
      examples: [{ reads: 'art_x' }],
      properties: { ...INPUT.properties, reads: { ...INPUT.properties.reads, description: 'other', title: 't' } },
    };
    expect(digestOf(undefined, annotated)).toBe(base);
  });

  it('keeps a property named like an annotation, and data keywords whole', () => {
    const named = {
      type: 'object',
      properties: { description: { type: 'string', description: 'the text' } },
      default: { description: 'x' },
    };
    expect(withoutAnnotations(named)).toEqual({
      type: 'object',
      properties: { description: { type: 'string' } },
      default: { description: 'x' },
    });
    expect(
      withoutAnnotations({
        allOf: [{ title: 'a', minimum: 1 }],
        items: { description: 'd', type: 'string' },
        $defs: { file_x: { title: 't', type: 'null' } },
      }),
    ).toEqual({
      allOf: [{ minimum: 1 }],
      items: { type: 'string' },
      $defs: { file_x: { type: 'null' } },
    });
  });

  it('fills what the manifest leaves out: the default entrypoint, null for unset limits, empty network', () => {
    const c = toolContract(
      ToolManifestSchema.parse({
        ...MANIFEST,
        entrypoint: undefined,
        limits: { maxInputBytes: 1, maxOutputBytes: 2 },
        capabilities: { abiVersion: 1, allow: [] },
      }),
      INPUT,
      OUTPUT,
    );
    expect(c).toMatchObject({
      entrypoint: 'execute',
      limits: { fuel: null, max_memory_pages: null, max_capability_calls: null },
      capabilities: { allow: [], network: [] },
    });
    expect(Object.keys(c)).not.toContain('description');
  });
});

describe('contractDigest of a loaded toolpack', () => {
  const load = async (edit?: (dir: string) => void): Promise<string> => {
    const t = tempDir('helix-contract-');
    try {
      const dir = path.join(t.dir, 'fastq-filter');
      cpSync(path.join(packageRoot(), 'plugins', 'fastq-filter'), dir, { recursive: true });
      edit?.(dir);
      const [tool] = await loadToolpacksOrThrow(t.dir, loadPolicy(undefined).policy);
      return contractDigest(tool!.manifest, tool!.inputSchema, tool!.outputSchema);
    } finally {
      t.cleanup();
    }
  };

  it('is the same for the same files in another directory, and follows the content of a $ref schema file', async () => {
    const here = await load();
    expect(await load()).toBe(here);
    const schema = (dir: string): string => path.join(dir, 'schemas', 'input.json');
    expect(
      await load((dir) => writeFileSync(schema(dir), readFileSync(schema(dir), 'utf8').replace('"maxLength": 200', '"maxLength": 100'))),
    ).not.toBe(here);
  }, 60_000);
});
