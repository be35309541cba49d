// Fuel the C SDK's helix_seq_reader spends per byte next to the AssemblyScript SDK's SeqReader,
// on the same generated 10 MB FASTA and FASTQ, measured the way the host charges it: each probe
// (programs/seq-cost.c, built with clang as a C pack is; the AS SDK's read-cost probe) is
// instrumented by the host's own instrumenter and reads from the simulated broker. Each run is
// checked against a JS reference first (record, sequence and quality counts, edge bytes), so
// the figures belong to readers that read right. Fuel is deterministic, so C <= AS is a fair
// assertion; the figures are printed for the README.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileC } from '../../../host/6-faces/toolchain/compile-c.js';
import { compileProgramBytes } from '../../assemblyscript/test/harness.js';
import { expectedRecords, fasta, fastq, instrumented, metered, type ReadCount } from '../../assemblyscript/test/read-inputs.js';
import { writeCPack } from './c-packs.js';

const SIZE = 10_000_000;
const root = mkdtempSync(path.join(tmpdir(), 'helix-c-cost-'));
let cProbe: WebAssembly.Module;
let asProbe: WebAssembly.Module;

beforeAll(async () => {
  const dir = writeCPack(root, { id: 'c.seqcost', program: 'seq-cost.c' });
  cProbe = instrumented((await compileC(dir, ['src/main.c'])).bytes);
  asProbe = instrumented(await compileProgramBytes('test/assembly/read-cost-probe.ts'));
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

const inputs = { fasta: fasta(SIZE), fastq: fastq(SIZE) };

describe('helix_seq_reader cost per byte next to SeqReader (10 MB, host instrumentation)', () => {
  it('reads the reference records at no more fuel per byte than the AssemblyScript reader, parts and whole records', async () => {
    for (const name of ['fasta', 'fastq'] as const) {
      const expected = expectedRecords(inputs[name]);
      const cost: Record<string, number> = {};
      const pages: string[] = [];
      for (const [probe, mode] of [
        ['as', 'seq'],
        ['as', 'records'],
        ['c', 'parts'],
        ['c', 'records'],
        ['c', 'keep'],
      ] as const) {
        const run = await metered<ReadCount>(probe === 'as' ? asProbe : cProbe, inputs[name], { mode });
        expect({ probe, mode, ...run.output }).toMatchObject({
          probe,
          mode,
          ...expected,
          sum: mode === 'records' && probe === 'c' ? 0 : expected.sum,
        });
        cost[`${probe} ${mode}`] = run.perByte;
        pages.push(`${probe} ${mode} ${run.pages}`);
      }
      console.log(
        `fuel per byte on ${name}: SeqReader.next ${cost['as seq']!.toFixed(2)}, helix_seq_next_part ${cost['c parts']!.toFixed(2)}; ` +
          `SeqReader.nextRecord ${cost['as records']!.toFixed(2)}, helix_seq_next ${cost['c keep']!.toFixed(2)} ` +
          `(${cost['c records']!.toFixed(2)} with keep_sequence false); memory pages at the end: ${pages.join(', ')}`,
      );
      expect({ name, parts: cost['c parts']! <= cost['as seq']!, records: cost['c keep']! <= cost['as records']! }).toEqual({
        name,
        parts: true,
        records: true,
      });
    }
  }, 300_000);
});
