// The HelixError a synchronous decision refuses with: for tests of what is refused, and with which code.
import { expect } from 'vitest';
import { HelixError } from '../../abi/index.js';

/** The HelixError `decide` throws; fails the test when it throws something else or nothing. */
export function refusalOf(decide: () => unknown): HelixError {
  try {
    decide();
  } catch (err) {
    expect(err).toBeInstanceOf(HelixError);
    return err as HelixError;
  }
  throw new Error('expected a refusal');
}
