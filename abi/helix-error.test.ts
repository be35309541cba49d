import { describe, expect, it } from 'vitest';
import { HelixError, isHelixError } from './helix-error.js';

describe('isHelixError', () => {
  it('knows a HelixError made by another copy of the module, which instanceof does not', async () => {
    // A query makes the module loader evaluate the file a second time: a second copy of the class.
    const second = './helix-error.js?second-copy';
    const copy = (await import(/* @vite-ignore */ second)) as typeof import('./helix-error.js');
    expect(copy.HelixError).not.toBe(HelixError);
    const foreign = new copy.HelixError('I-REQ-JSON');
    expect(foreign instanceof HelixError).toBe(false);
    expect(isHelixError(foreign)).toBe(true);
    expect(copy.isHelixError(new HelixError('I-REQ-JSON'))).toBe(true);
  });

  it('refuses look-alikes: a plain Error named HelixError, an object with a code', () => {
    const named = Object.assign(new Error('x'), { name: 'HelixError', code: 'I-REQ-JSON' });
    expect(isHelixError(named)).toBe(false);
    expect(isHelixError({ code: 'I-REQ-JSON', message: 'x' })).toBe(false);
    expect(isHelixError(null)).toBe(false);
  });
});
