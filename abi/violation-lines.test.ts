import { describe, expect, it } from 'vitest';
import { violationLine, violationLines } from './violation-lines.js';

describe('violationLines', () => {
  it('writes each violation as POINTER: REASON, (root) for the whole value, a text as it is', () => {
    expect(violationLine({ path: '/a/0', message: 'must be a string (found an integer, 2)', keyword: 'type' })).toBe(
      '/a/0: must be a string (found an integer, 2)',
    );
    expect(violationLine({ path: '', message: 'is missing required property "x"' })).toBe('(root): is missing required property "x"');
    expect(violationLine('source.path: Required')).toBe('source.path: Required');
    expect(violationLine({ file: 'a.yaml', rule: 'r' })).toBe('{"file":"a.yaml","rule":"r"}');
  });

  it('gives the first max lines and counts the rest; none without a list', () => {
    const details = { violations: Array.from({ length: 5 }, (_, i) => ({ path: `/${i}`, message: 'bad' })) };
    expect(violationLines(details, 2)).toEqual({ lines: ['/0: bad', '/1: bad'], more: 3 });
    expect(violationLines(details).lines).toHaveLength(5);
    expect(violationLines({})).toEqual({ lines: [], more: 0 });
    expect(violationLines(undefined)).toEqual({ lines: [], more: 0 });
    expect(violationLines({ violations: 'x' })).toEqual({ lines: [], more: 0 });
  });
});
