// How a container tool's stdout becomes its output (ABI-CONTAINER-006): tsv rows with decimal
// cells as numbers, one JSON object, or nothing; what does not read as the format refused.
import { describe, expect, it } from 'vitest';
import type { HelixError } from '../../../abi/index.js';
import { readStdout } from './container-stdout.js';

function reason(format: 'tsv' | 'json', text: string, truncated = false): string {
  try {
    readStdout(format, text, truncated);
  } catch (err) {
    expect(err).toMatchObject({ code: 'S-TOOL-CONTAINER-STDOUT' });
    return ((err as HelixError).details as { reason: string }).reason;
  }
  throw new Error('expected the stdout to be refused');
}

describe('readStdout', () => {
  it('reads a tsv table: a row per line, decimal cells as numbers, anything else as text', () => {
    const text = 'file\tnum\tavg\tneg\tpct\tzeros\tbig\n/a.fa\t3\t7.0\t-2.5\tNaN\t0000\t12345678901234567890\n';
    expect(readStdout('tsv', text, false)).toEqual({
      rows: [{ file: '/a.fa', num: 3, avg: 7, neg: -2.5, pct: 'NaN', zeros: '0000', big: '12345678901234567890' }],
    });
    expect(readStdout('tsv', 'a\tb\n', false)).toEqual({ rows: [] });
  });

  it('reads one JSON object, and nothing for none', () => {
    expect(readStdout('json', ' {"a": [1, "x"]}\n', false)).toEqual({ a: [1, 'x'] });
    expect(readStdout('none', 'anything', true)).toEqual({});
  });

  it('refuses a table that is empty, ragged, or names a column twice, empty or __proto__; text that is not one object; stdout that was cut', () => {
    expect(reason('tsv', '')).toBe('it is empty: a tsv table needs a header line');
    expect(reason('tsv', 'a\tb\n1\n')).toBe('line 2 has 1 cells, the header 2');
    expect(reason('tsv', 'a\ta\n')).toMatch(/empty, repeated or reserved/);
    expect(reason('tsv', '__proto__\n1\n')).toMatch(/empty, repeated or reserved/);
    expect(reason('json', '[1]')).toBe('it is JSON but not an object');
    expect(reason('json', 'nope')).toMatch(/^it is not JSON/);
    expect(reason('json', `${'['.repeat(100)}${']'.repeat(100)}`.replace(/^\[/, '{"a":[').replace(/\]$/, ']}'))).toMatch(/^at \/a/);
    expect(reason('tsv', 'a\n1\n', true)).toBe("it was cut at the policy's docker.ceilings.maxStdoutBytes");
  });
});
