// MCP tool names: the mapping from Helix ids, and the startup check that no two ids share one.
import { describe, expect, it } from 'vitest';
import { MCP_TOOL_NAME_PATTERN, mcpToolName, toolNameTable } from './names.js';

describe('MCP tool names', () => {
  it('mcpToolName drops the helix. prefix of built-ins and turns the dots of toolpack ids into dashes', () => {
    expect(mcpToolName('helix.artifact_get', 'builtin')).toBe('artifact_get');
    expect(mcpToolName('seq.gc_content', 'wasm')).toBe('seq-gc_content');
    expect(mcpToolName('lab.seq.align_v2', 'wasm')).toBe('lab-seq-align_v2');
  });

  it('mcpToolName shortens a name past 64 characters to a valid one that keeps its head and hashes the id', () => {
    const long = `lab.${'a'.repeat(40)}.${'b'.repeat(40)}`;
    const name = mcpToolName(long, 'wasm');
    expect(name).toMatch(MCP_TOOL_NAME_PATTERN);
    expect(name).toHaveLength(64);
    expect(name.startsWith(`lab-${'a'.repeat(40)}-`)).toBe(true);
    expect(mcpToolName(`${long}x`, 'wasm')).not.toBe(name);
  });

  it('toolNameTable maps every name back to its id, one entry per id whatever the versions', () => {
    const table = toolNameTable([
      { id: 'seq.gc_content', kind: 'wasm' },
      { id: 'seq.gc_content', kind: 'wasm' },
      { id: 'helix.run_get', kind: 'builtin' },
    ]);
    expect([...table]).toEqual([
      ['seq-gc_content', 'seq.gc_content'],
      ['run_get', 'helix.run_get'],
    ]);
  });

  it('toolNameTable refuses to start when two ids map to one name, naming both', () => {
    expect(() =>
      toolNameTable([
        { id: 'seq.gc_content', kind: 'wasm' },
        { id: 'helix.seq-gc_content', kind: 'builtin' },
      ]),
    ).toThrow(
      expect.objectContaining({
        code: 'P-PRECOND-MANIFEST-INVALID',
        details: { violations: ['helix.seq-gc_content: its MCP tool name "seq-gc_content" is already the name of seq.gc_content'] },
      }),
    );
  });
});
