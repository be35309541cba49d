import { describe, expect, it } from 'vitest';
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
    const reimported = { ...base, input: { ...base.input, reads: otherId }, input_artifacts: [{ path: '/reads', artifact_id: otherId, sha256: 'c'.repeat(64) }] };
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
