// Guest text quoted in a fault report stays Unicode text and within its byte budget.
import { describe, expect, it } from 'vitest';
import { utf8Prefix, wellFormed } from './report-text.js';

const lone = /[\ud800-\udfff]/u;

describe('utf8Prefix', () => {
  it('cuts at a byte budget, not at a number of UTF-16 code units', () => {
    const text = `${'é'.repeat(700)}${'z'.repeat(1600)}`;
    const cut = utf8Prefix(text, 1024);
    expect(Buffer.byteLength(cut)).toBe(1024);
    expect(text.startsWith(cut)).toBe(true);
  });

  it('never cuts an emoji in half (the cut falls before it), so no lone surrogate is left', () => {
    for (let pad = 195; pad <= 200; pad++) {
      const cut = utf8Prefix(`${'z'.repeat(pad)}${'😀'.repeat(100)}`, 200);
      expect(lone.test(cut)).toBe(false);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(200);
      expect(Buffer.byteLength(cut)).toBeGreaterThan(196);
    }
  });

  it('writes a lone surrogate of the text as U+FFFD and keeps short text whole', () => {
    expect(utf8Prefix('a\ud800b', 100)).toBe('a\ufffdb');
    expect(utf8Prefix('short', 100)).toBe('short');
    expect(utf8Prefix('', 10)).toBe('');
  });
});

describe('wellFormed', () => {
  it("makes V8's own quoting of a text well-formed (JSON.parse cuts its quote through a pair)", () => {
    let message = '';
    try {
      JSON.parse(`a${'😀'.repeat(30)}`);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(lone.test(wellFormed(message))).toBe(false);
  });
});
