import { describe, expect, it } from 'vitest';
import type { HelixError } from '../../abi/index.js';
import type { Tool } from './tools/tool.js';
import { ToolRegistry } from './registry.js';

// The registry reads only the id and version of a tool.
const tool = (id: string, version: string) => ({ id, version }) as unknown as Tool;
const registry = new ToolRegistry([
  tool('seq.stats', '1.0.0'),
  tool('seq.stats', '1.2.0'),
  tool('seq.stats', '2.0.0'),
  tool('seq.revcomp', '0.3.1'),
]);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as HelixError).code;
  }
  return 'none';
}

describe('ToolRegistry.resolve', () => {
  it('picks the newest version inside the range', () => {
    expect(registry.resolve('seq.stats', '1.x').version).toBe('1.2.0');
    expect(registry.resolve('seq.stats', '~1.0.0').version).toBe('1.0.0');
    expect(registry.resolve('seq.stats', '2.0.0').version).toBe('2.0.0');
    expect(registry.resolve('seq.revcomp', '*').version).toBe('0.3.1');
  });

  it('refuses a range spanning two majors as ambiguous', () => {
    expect(codeOf(() => registry.resolve('seq.stats', '*'))).toBe('C-CONTRACT-VERSION-AMBIGUOUS');
    expect(codeOf(() => registry.resolve('seq.stats', '>=1.1.0'))).toBe('C-CONTRACT-VERSION-AMBIGUOUS');
  });

  it('tells unknown tools, unmatched ranges and malformed ranges apart', () => {
    expect(codeOf(() => registry.resolve('seq.nope', '*'))).toBe('C-CONTRACT-TOOL-UNKNOWN');
    expect(codeOf(() => registry.resolve('seq.stats', '3.x'))).toBe('C-CONTRACT-VERSION-NO-MATCH');
    expect(codeOf(() => registry.resolve('seq.stats', 'latest please'))).toBe('I-REQ-ENVELOPE');
  });

  it('lists tools by id, newest version first', () => {
    expect(registry.list().map((t) => `${t.id}@${t.version}`)).toEqual([
      'seq.revcomp@0.3.1',
      'seq.stats@2.0.0',
      'seq.stats@1.2.0',
      'seq.stats@1.0.0',
    ]);
  });
});
