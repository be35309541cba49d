// Many `helix` processes on one fresh store at once (ABI-STORE-001..007): imports of files of
// different sizes, calls and listings, several trials. Every process exits 0; afterwards every
// record parses, every blob reads back with its hash, every artifact an import reported and
// every run a call reported is in the store, and `helix store check` finds nothing. A small run
// of scripts/store-stress.ts; the script runs it long.
import { describe, expect, it } from 'vitest';
import { runStress } from '../scripts/store-stress.js';

describe('the store under concurrent processes', () => {
  it('lets eight processes import, call and list on one fresh store, trial after trial, with every process exiting 0 and nothing lost', async () => {
    const report = await runStress({ trials: 4, processes: 8, sizesMiB: [1, 3, 8, 20], timeoutMs: 240_000 });
    expect(report.failures).toEqual([]);
    expect(report.outcomes).toEqual({ 'exit 0': 32 });
    // Four imports and two calls a trial said what they stored; each was looked up.
    expect(report.reported).toEqual({ artifacts: 16, runs: 8 });
    expect(report.storeProblems).toEqual([]);
    expect(report.coreFiles).toBe(0);
  }, 1_200_000);
});
