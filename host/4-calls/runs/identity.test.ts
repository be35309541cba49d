// Run identity (ABI-RUNID-001..008): what enters a run id and what does not, and fixed vectors
// that pin the formula's exact output, so a change that would orphan stored runs fails here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPolicy } from '../policy/load-policy.js';
import { canonicalParams, runIdentity, type ParamsSource } from './identity.js';

const base: ParamsSource = {
  tool_id: 'seq.stats',
  tool_version: '1.2.0',
  contract_version: 'v1',
  module_digest: `sha256:${'a'.repeat(64)}`,
  input: { reads: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ', min_len: 10, opts: { b: 1, a: [1, 2] } },
  input_artifacts: [{ path: '/reads', artifact_id: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ', sha256: 'c'.repeat(64) }],
};
const POLICY = `sha256:${'p'.repeat(64)}`;
const id = (src: ParamsSource, policy = POLICY) => runIdentity(src, policy).run_id;

describe('run identity', () => {
  it('is the same for the same call, whatever the key order of the input', () => {
    const reordered = { ...base, input: { opts: { a: [1, 2], b: 1 }, min_len: 10, reads: base.input.reads } };
    expect(id(reordered)).toBe(id(base));
    expect(id(base)).toMatch(/^run_[0-9a-f]{32}$/);
  });

  it('changes with any change of params, tool version, module digest, contract or policy', () => {
    const variants: ParamsSource[] = [
      { ...base, input: { ...base.input, min_len: 11 } },
      { ...base, tool_version: '1.2.1' },
      { ...base, module_digest: `sha256:${'b'.repeat(64)}` },
      { ...base, contract_version: 'v2' },
      { ...base, tool_id: 'seq.stats2' },
      { ...base, input_artifacts: [{ ...base.input_artifacts[0]!, sha256: 'd'.repeat(64) }] },
      { ...base, boundary: { as_of_created_at: 5, artifact_count: 2 } },
      { ...base, limits: { fuel: 100, max_memory_pages: 16, max_output_bytes: 1000 } },
      { ...base, limits: { fuel: 100, max_memory_pages: 8, max_output_bytes: 1000 } },
      { ...base, contract_digest: `sha256:${'1'.repeat(64)}` },
      { ...base, contract_digest: `sha256:${'2'.repeat(64)}` },
    ];
    const ids = new Set([id(base), ...variants.map((v) => id(v)), id(base, `sha256:${'q'.repeat(64)}`)]);
    expect(ids.size).toBe(variants.length + 2);
  });

  it('depends on input artifacts by content: the same bytes under another id are the same work', () => {
    const otherId = 'art_01J0000000000000000000000A';
    const reimported = {
      ...base,
      input: { ...base.input, reads: otherId },
      input_artifacts: [{ path: '/reads', artifact_id: otherId, sha256: 'c'.repeat(64) }],
    };
    expect(id(reimported)).toBe(id(base));
    expect(canonicalParams(base)).toContain(`"reads":"sha256:${'c'.repeat(64)}"`);
    expect(canonicalParams(base)).not.toContain('art_');
  });

  it('replaces ids nested in arrays and objects at their pointer only', () => {
    const src: ParamsSource = {
      ...base,
      input: { pairs: [{ r1: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ' }], note: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ' },
      input_artifacts: [{ path: '/pairs/0/r1', artifact_id: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ', sha256: 'e'.repeat(64) }],
    };
    const params = JSON.parse(canonicalParams(src)) as { input: { pairs: Array<{ r1: string }>; note: string } };
    expect(params.input.pairs[0]!.r1).toBe(`sha256:${'e'.repeat(64)}`);
    expect(params.input.note).toBe('art_01HZZZZZZZZZZZZZZZZZZZZZZZ');
  });

  it('keeps a host built-in identity (no contract digest) exactly as it was before the digest existed', () => {
    // Computed by the code before ABI-RUNID-004: a store's built-in runs (imports) still replay.
    const builtin: ParamsSource = {
      tool_id: 'helix.artifact_list',
      tool_version: '1.0.0',
      contract_version: 'v1',
      module_digest: null,
      entrypoint: 'execute',
      input: { type: 'fastq' },
      input_artifacts: [],
      boundary: { as_of_created_at: 5, artifact_count: 2 },
      limits: { fuel: 1, max_memory_pages: 1, max_output_bytes: 1000 },
    };
    expect(runIdentity(builtin, POLICY)).toMatchObject({
      run_id: 'run_57b027ac64ad2f5ec16147d5640aca35',
      params_hash: 'sha256:81aba80cdc5ac3b049db2bd5834993d6010d0279008a8325a07ba39b373e3f81',
    });
    expect(canonicalParams(builtin)).not.toContain('contract_digest');
  });

  it('holds a toolpack contract digest in the canonical params, beside the module digest', () => {
    const digest = `sha256:${'3'.repeat(64)}`;
    const params = JSON.parse(canonicalParams({ ...base, contract_digest: digest })) as { tool: Record<string, unknown> };
    expect(params.tool).toMatchObject({ contract_digest: digest, module_digest: base.module_digest });
  });
});

// Fixed vectors, computed once by this code and written down as literals. A store finds a run again
// (replay, idempotency, `helix runs show`) only by recomputing the same run_id from the same call:
// any change to the canonical params, their hashing, the run_id formula or the policy hash would
// silently orphan every stored run. If one of these fails, the change is a break of ABI-RUNID-001
// (stored runs no longer replay), not a test to update in passing.
describe('run identity vectors', () => {
  const WASM: ParamsSource = {
    tool_id: 'seq.stats',
    tool_version: '1.2.0',
    contract_version: 'v1',
    module_digest: `sha256:${'a'.repeat(64)}`,
    contract_digest: `sha256:${'b'.repeat(64)}`,
    entrypoint: 'execute',
    input: { reads: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ', min_len: 10, opts: { b: 1, a: [1, 2] } },
    input_artifacts: [{ path: '/reads', artifact_id: 'art_01HZZZZZZZZZZZZZZZZZZZZZZZ', sha256: 'c'.repeat(64) }],
    limits: { fuel: 100_000_000, max_memory_pages: 16, max_output_bytes: 65536 },
  };

  it('a toolpack call: contract digest, entrypoint, limits and an input artifact', () => {
    expect(runIdentity(WASM, POLICY)).toEqual({
      run_id: 'run_4a19953454dd377e5a5bb9cfdca61618',
      params_hash: 'sha256:165052bba789f8df33f0701defa78305af4e9f9eed880586ba594939d80f8c83',
      canonical_params:
        `{"boundary":null,"input":{"min_len":10,"opts":{"a":[1,2],"b":1},"reads":"sha256:${'c'.repeat(64)}"},` +
        `"input_artifacts":[{"path":"/reads","sha256":"${'c'.repeat(64)}"}],` +
        '"limits":{"fuel":100000000,"max_memory_pages":16,"max_output_bytes":65536},' +
        `"tool":{"contract_digest":"sha256:${'b'.repeat(64)}","contract_version":"v1","entrypoint":"execute",` +
        `"id":"seq.stats","module_digest":"sha256:${'a'.repeat(64)}","version":"1.2.0"}}`,
    });
  });

  it('the fewest fields: no entrypoint, limits, artifacts, boundary or contract digest', () => {
    const bare: ParamsSource = {
      tool_id: 't.bare',
      tool_version: '0.1.0',
      contract_version: 'v1',
      module_digest: `sha256:${'d'.repeat(64)}`,
      input: {},
      input_artifacts: [],
    };
    expect(runIdentity(bare, POLICY)).toEqual({
      run_id: 'run_9972ff65ed6a26e908679e76f7a75abc',
      params_hash: 'sha256:581f0c4d28347b3ecd0824373aed37b52f713c84bae9d390abfcfdc935b86593',
      canonical_params: `{"boundary":null,"input":{},"input_artifacts":[],"limits":null,"tool":{"contract_version":"v1","entrypoint":null,"id":"t.bare","module_digest":"sha256:${'d'.repeat(64)}","version":"0.1.0"}}`,
    });
  });

  it('escaped JSON pointers, artifacts listed out of order, non-ASCII text and an exponent', () => {
    const nested: ParamsSource = {
      tool_id: 'seq.pair',
      tool_version: '2.0.0',
      contract_version: 'v2',
      module_digest: `sha256:${'e'.repeat(64)}`,
      contract_digest: `sha256:${'f'.repeat(64)}`,
      entrypoint: 'run',
      input: {
        'a/b': [{ 'c~d': 'art_01J0000000000000000000000B' }],
        first: 'art_01J0000000000000000000000A',
        note: '\u00e9 \u2603 \u2028',
        n: 1.5e-7,
      },
      input_artifacts: [
        { path: '/first', artifact_id: 'art_01J0000000000000000000000A', sha256: '1'.repeat(64) },
        { path: '/a~1b/0/c~0d', artifact_id: 'art_01J0000000000000000000000B', sha256: '2'.repeat(64) },
      ],
      limits: { fuel: 1, max_memory_pages: 2, max_output_bytes: 3 },
    };
    expect(runIdentity(nested, POLICY)).toMatchObject({
      run_id: 'run_40dea55de78ecc9d3d6c0bbdfdcaa049',
      params_hash: 'sha256:20fc83f50ee8bae7b6f773e069fe5fe752c58c7a56cc4f8d12983f16304d361c',
    });
  });

  it('the policy hash: a policy file with an environment variable, and the default policy', () => {
    // The policy hash is the third part of every run_id: its canonical form (defaults filled in,
    // variables expanded) must not move either. The default policy's hash depends on the working
    // directory only, through its import and export roots.
    const dir = mkdtempSync(path.join(tmpdir(), 'helix-identity-'));
    try {
      const file = path.join(dir, 'policy.yaml');
      writeFileSync(
        file,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own placeholder, which loadPolicy expands from the environment
        'version: 1\ntools:\n  allow: [seq.*]\ngrants:\n  seq.stats: [artifact.read, log.emit]\nceilings:\n  fuel: 5000000\npaths:\n  importRoots: ["${DATA}"]\n  exportRoots: []\n',
      );
      expect(loadPolicy(file, { env: { DATA: '/data/in' } }).hash).toBe(
        'sha256:d52701be33b60687191a5e8c9d00869338d977ac255c36760269b7d3ea2c861b',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(loadPolicy(undefined, { env: { PWD: '/home/author/work' } }).hash).toBe(
      'sha256:08f9a8594d177ccdeb5d1de8712e34b4c49862bb662e6760544547063b489dce',
    );
  });
});
