// Response envelopes as MCP tool results: the text an agent reads, cut where it must be.
import { describe, expect, it } from 'vitest';
import type { ResponseEnvelope } from '../../../abi/index.js';
import { RESULT_TEXT_MAX_CHARS, toolResult, truncateText } from './results.js';

const envelope = (over: Partial<ResponseEnvelope>): ResponseEnvelope => ({
  call_id: 'c1',
  status: 'success',
  side_effects: [],
  metrics: { duration_ms: 1, fuel_used: 10, memory_peak_pages: 1 },
  provenance: { tool_id: 't.x', tool_version: '1.0.0', digest: null },
  warnings: [],
  commit_token: null,
  run_id: 'run_0123456789abcdef0123456789abcdef',
  replayed: false,
  ...over,
});

describe('MCP tool results', () => {
  it('toolResult keeps a large output whole in structuredContent and cuts only its text', () => {
    const output = { text: 'x'.repeat(RESULT_TEXT_MAX_CHARS * 2) };
    const r = toolResult(envelope({ output }), false);
    expect(r.structuredContent).toBe(output);
    const text = (r.content[0] as { text: string }).text;
    expect(text.length).toBeLessThan(RESULT_TEXT_MAX_CHARS + 200);
    expect(text).toMatch(
      /… \[truncated: \d+ more characters; the whole output is in structuredContent and in run_get run_0123456789abcdef0123456789abcdef\]$/,
    );
  });

  it('toolResult of a failure lists the violations, the hint and the run in its text', () => {
    const violations = Array.from({ length: 25 }, (_, i) => ({ path: `/a/${i}`, message: 'must be integer' }));
    const r = toolResult(
      envelope({
        status: 'invalid_request',
        error: { code: 'I-REQ-INPUT', message: 'The input has 25 schema violations.', details: { violations }, hint: 'Fix them.' },
      }),
      false,
    );
    expect(r.isError).toBe(true);
    const lines = (r.content[0] as { text: string }).text.split('\n');
    expect(lines[0]).toBe('invalid_request I-REQ-INPUT: The input has 25 schema violations.');
    expect(lines[1]).toBe('  /a/0: must be integer');
    expect(lines).toContain('  … 5 more in structuredContent.error.details.violations');
    expect(lines.slice(-2)).toEqual(['hint: Fix them.', 'run: run_0123456789abcdef0123456789abcdef']);
  });

  it('truncateText never splits a surrogate pair', () => {
    const cut = truncateText(`ab${'😀'.repeat(10)}`, 3, 'see elsewhere');
    expect(cut.startsWith('ab…')).toBe(true);
  });
});
