// Fuel the SDK's readers spend per byte, measured the way the host charges it: the probe tool
// (test/assembly/read-cost-probe.ts) is instrumented by the host's own instrumenter and reads
// 10 MB artifacts from the simulated broker (bulk reads into the reader's 1 MiB buffer, the
// broker's per-call charge included). Each run is checked against a JS reference first (line,
// byte and record counts, edge bytes), so the figures belong to a reader that reads right. The
// figures are printed for the README tables; the bounds are fuel budgets (fuel is
// deterministic, not timing) between today's figures and those of the reader on JSON text
// pieces (9.6, 12.2 and 24.5 per byte for line parts on FASTA, FASTQ and TSV; 70.8 for nextLine
// on TSV; 11.4 and 16.2 for SeqReader on FASTA and FASTQ), so a return to that cost fails.

import { beforeAll, describe, expect, it } from 'vitest';
import { compileProgramBytes } from './harness.js';
import { expectedRecords, fasta, fastq, instrumented, lines, edgeSum, metered as meteredCall, type ReadCount, tsv } from './read-inputs.js';

const SIZE = 10_000_000;
let probe: WebAssembly.Module;

beforeAll(async () => {
  probe = instrumented(await compileProgramBytes('test/assembly/read-cost-probe.ts'));
}, 120_000);

/** One probe call on an instrumented instance; returns its output and the fuel it used. */
async function metered(text: string, mode: string): Promise<{ output: ReadCount; perByte: number }> {
  const result = await meteredCall(probe, text, { mode });
  if (process.env.HELIX_READ_COST_PAGES) console.log(`${mode}: ${result.pages} pages`);
  return result;
}

const inputs = { fasta: fasta(SIZE), fastq: fastq(SIZE), tsv: tsv(SIZE) };
const PART_BUDGET = { fasta: 7, fastq: 7, tsv: 7 };
const SEQ_BUDGET = { fasta: 9, fastq: 10 };

describe('reading cost per byte (10 MB, host instrumentation)', () => {
  it('line parts: the reference lines, at a low cost on every kind of text', async () => {
    const costs: Record<string, number> = {};
    for (const [name, text] of Object.entries(inputs)) {
      const expected = lines(text);
      const { output, perByte } = await metered(text, 'parts');
      expect(output).toMatchObject({ lines: expected.length, bytes: Buffer.byteLength(expected.join('')), sum: edgeSum(expected) });
      const count = await metered(text, 'count');
      expect(count.output.lines).toBe(expected.length);
      console.log(
        `ArtifactReader.nextLinePartBytes on ${name}: ${count.perByte.toFixed(2)} fuel per byte alone, ${perByte.toFixed(2)} with a loop over the parts`,
      );
      costs[name] = perByte;
    }
    for (const [name, budget] of Object.entries(PART_BUDGET)) expect({ name, under: costs[name]! < budget }).toEqual({ name, under: true });
  }, 120_000);

  it('whole lines as strings and tab counting', async () => {
    const expected = lines(inputs.tsv);
    const whole = await metered(inputs.tsv, 'lines');
    expect(whole.output).toMatchObject({ lines: expected.length, bytes: expected.join('').length });
    const tabs = await metered(inputs.tsv, 'tabs');
    expect(tabs.output.tabs).toBe(inputs.tsv.split('\t').length - 1);
    console.log(
      `ArtifactReader.nextLine on tsv: ${whole.perByte.toFixed(2)} fuel per byte; line parts + a byte loop counting tabs: ${tabs.perByte.toFixed(2)}`,
    );
    expect(whole.perByte).toBeLessThan(65);
  }, 120_000);

  it('SeqReader parts: the reference records, at a low cost on FASTA and FASTQ', async () => {
    const costs: Record<string, number> = {};
    for (const name of ['fasta', 'fastq'] as const) {
      const { output, perByte } = await metered(inputs[name], 'seq');
      expect(output).toMatchObject(expectedRecords(inputs[name]));
      console.log(`SeqReader.next on ${name}: ${perByte.toFixed(2)} fuel per byte`);
      costs[name] = perByte;
    }
    for (const [name, budget] of Object.entries(SEQ_BUDGET)) expect({ name, under: costs[name]! < budget }).toEqual({ name, under: true });
  }, 120_000);
});
