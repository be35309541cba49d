import { describe, expect, it } from 'vitest';
import { isHelixError } from '../../abi/index.js';
import { retryTransient, TRANSIENT_ATTEMPTS } from './sync-writes.js';

describe('retryTransient (ABI-STORE-005)', () => {
  it('tries a transaction LMDB aborted as inconsistent again, and returns what the attempt that commits returns', () => {
    let attempts = 0;
    const result = retryTransient(() => {
      attempts += 1;
      if (attempts < 3) throw new Error('MDB_PROBLEM: Unexpected problem - txn should abort: mdb_page_touch no parent');
      return 'committed';
    });
    expect(result).toBe('committed');
    expect(attempts).toBe(3);
  });

  it('ends with R-CAP-STORE-CONFLICT naming the LMDB failure when every attempt fails', () => {
    let attempts = 0;
    let caught: unknown;
    try {
      retryTransient(() => {
        attempts += 1;
        throw new Error(attempts % 2 === 0 ? 'MDB_BAD_TXN: Transaction must abort' : 'MDB_PROBLEM: mdb_page_touch no parent');
      });
    } catch (err) {
      caught = err;
    }
    expect(attempts).toBe(TRANSIENT_ATTEMPTS);
    expect(isHelixError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'R-CAP-STORE-CONFLICT', details: { attempts: TRANSIENT_ATTEMPTS, retry_after_ms: 1000 } });
    expect((caught as Error).message).toContain('nothing of the write was stored');
  });

  it('passes any other error on at once', () => {
    let attempts = 0;
    expect(() =>
      retryTransient(() => {
        attempts += 1;
        throw new Error('MDB_MAP_FULL: Environment mapsize limit reached');
      }),
    ).toThrow('MDB_MAP_FULL');
    expect(attempts).toBe(1);
  });
});
