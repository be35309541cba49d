import { describe, expect, it } from 'vitest';
import { ERROR_CLASSES, ERROR_CODE_PATTERN, ERROR_CODES, errorClassOf, isRetryable, statusForCode } from './errors.js';

describe('the error taxonomy', () => {
  it('gives every host code a known class, a message and a hint', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(ERROR_CODE_PATTERN);
      expect(errorClassOf(code)).toBeDefined();
      expect(spec.message.length).toBeGreaterThan(0);
      expect(spec.hint.length).toBeGreaterThan(0);
    }
  });

  it('maps invalid-request codes to invalid_request and nothing else', () => {
    for (const code of Object.keys(ERROR_CODES)) {
      expect(statusForCode(code) === 'invalid_request').toBe(code.startsWith('I-REQ-'));
    }
  });

  it('makes timeouts retryable only for tools without side effects', () => {
    expect(statusForCode('R-TIMEOUT-001', 'pure')).toBe('retryable_error');
    expect(statusForCode('R-TIMEOUT-001', 'idempotent')).toBe('retryable_error');
    expect(statusForCode('R-TIMEOUT-001', 'side_effectful')).toBe('terminal_error');
  });

  it('lets a code override its class default', () => {
    expect(ERROR_CLASSES['S-TOOL'].retryable).toBe(false);
    expect(isRetryable('S-TOOL-WORKER-LOST')).toBe(true);
    expect(ERROR_CLASSES['R-CAP'].retryable).toBe(true);
    expect(isRetryable('R-CAP-CALL-LIMIT')).toBe(false);
  });

  it('accepts guest subcodes of known classes and refuses other shapes', () => {
    expect(errorClassOf('D-DATA-FORMAT')).toBe('D-DATA');
    expect(statusForCode('R-UPSTREAM-HTTP-503')).toBe('retryable_error');
    for (const bad of ['X-FOO-1', 'S-TOOL', 's-tool-trap', 'S-TOOL-', 'I-REQ-bad']) expect(errorClassOf(bad)).toBeUndefined();
    expect(statusForCode('X-FOO-1')).toBe('terminal_error');
  });
});
