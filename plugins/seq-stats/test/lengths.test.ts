// seq.stats' length store (assembly/lengths.ts) on its own, through a probe: the histogram of
// short lengths and the heap-sorted list of long ones give every k-th length and N50 as a
// plain sort does, and the list refuses the record past its bound instead of growing.

import { beforeAll, describe, expect, it } from 'vitest';
import { callTool, compileProgram, type ToolExports } from '../../../sdk-guest/assemblyscript/test/harness.js';
import { random } from './sequences.js';

let probe: WebAssembly.Module;

beforeAll(async () => {
  probe = await compileProgram('../../plugins/seq-stats/test/assembly/lengths-probe.ts');
}, 120_000);

/** What the lengths probe answers: the lengths sorted and their N50, or how far a fill got. */
interface LengthsAnswer {
  sorted: number[];
  n50: number;
  added: number;
  max_long_records: number;
}

function call(input: Record<string, unknown>): LengthsAnswer {
  const exports = new WebAssembly.Instance(probe, { helix_v1: { capability_call: () => 0n } }).exports as unknown as ToolExports;
  const outcome = callTool(exports, input);
  if (outcome.kind !== 'output' || outcome.envelope.status !== 'ok') throw new Error(`probe failed: ${JSON.stringify(outcome)}`);
  return outcome.envelope.output as LengthsAnswer;
}

/** N50 by its definition: from the longest down, the first length where the running sum reaches half the total. */
function n50(lengths: number[]): number {
  const sum = lengths.reduce((a, b) => a + b, 0);
  let running = 0;
  for (const length of [...lengths].sort((a, b) => b - a)) {
    running += length;
    if (running * 2 >= sum) return length;
  }
  return 0;
}

describe('seq.stats length store', () => {
  it('sorts short and long lengths together and finds N50, for random mixes', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const rand = random(seed);
      const lengths = Array.from({ length: 1 + rand(3000) }, () =>
        rand(4) === 0 ? 65_536 + rand(1_000_000) : rand(4) === 0 ? 65_535 - rand(3) : rand(500),
      );
      const output = call({ lengths });
      expect({ seed, sorted: output.sorted, n50: output.n50 }).toEqual({
        seed,
        sorted: [...lengths].sort((a, b) => a - b),
        n50: n50(lengths),
      });
    }
  });

  it('refuses the long record past its bound, and takes every short one', () => {
    const output = call({ fill: 65_536 });
    expect(output.added).toBe(output.max_long_records);
    expect(output.max_long_records).toBe(512 * 1024);
    // Short lengths never fill anything: a count per length.
    expect(call({ lengths: Array.from({ length: 5000 }, (_, i) => i % 7) }).sorted.at(-1)).toBe(6);
  });
});
