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
import { FUEL_EXPORT, instrumentModule, START_EXPORT } from '../../../host/2-sandbox/wasm/index.js';
import { callTool, compileProgramBytes, okOutput } from './harness.js';
import { HostSim } from './host-sim.js';

const SIZE = 10_000_000;
let probe: WebAssembly.Module;

beforeAll(async () => {
  const bytes = await compileProgramBytes('test/assembly/read-cost-probe.ts');
  probe = new WebAssembly.Module(instrumentModule(bytes, { maxMemoryPages: 1024 }).bytes);
}, 120_000);

/** A deterministic stream of pseudo-random numbers below `n`. */
function random(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

function bases(next: (n: number) => number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += 'ACGT'[next(4)];
  return out;
}

/** About `size` bytes of FASTA: records of 1,000-5,000 bases in 60-column lines. */
function fasta(size: number): string {
  const next = random(1);
  const parts: string[] = [];
  let total = 0;
  for (let r = 0; total < size; r++) {
    const text = `>contig${r} length unknown\n${bases(next, 1000 + next(4000))
      .match(/.{1,60}/g)!
      .join('\n')}\n`;
    parts.push(text);
    total += text.length;
  }
  return parts.join('');
}

/** About `size` bytes of FASTQ: 100-base reads. */
function fastq(size: number): string {
  const next = random(2);
  const parts: string[] = [];
  let total = 0;
  for (let r = 0; total < size; r++) {
    let quality = '';
    for (let i = 0; i < 100; i++) quality += String.fromCharCode(33 + next(41));
    const text = `@read${r}/1 sample=S1\n${bases(next, 100)}\n+\n${quality}\n`;
    parts.push(text);
    total += text.length;
  }
  return parts.join('');
}

/** About `size` bytes of VCF-like TSV: 10 tab-separated columns a line, genotypes, 'é' now and then. */
function tsv(size: number): string {
  const next = random(3);
  const parts: string[] = ['#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n'];
  let total = 0;
  for (let r = 0; total < size; r++) {
    const text = `chr${1 + next(22)}\t${r * 17 + next(17)}\trs${next(1e6)}\t${'ACGT'[next(4)]}\t${'ACGT'[next(4)]}\t${next(100)}.5\tPASS\tDP=${next(200)};AF=0.${next(1000)}${next(50) === 0 ? ';NOTE=café' : ''}\tGT:DP\t${next(2)}/${next(2)}:${next(60)}\n`;
    parts.push(text);
    total += text.length;
  }
  return parts.join('');
}

/** Lines as the reader gives them: LF ends a line, a CR before it is dropped. */
function lines(text: string): string[] {
  const all = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (text.endsWith('\n')) all.pop();
  return all;
}

function edgeSum(strings: string[]): number {
  let sum = 0;
  for (const s of strings) {
    const bytes = Buffer.from(s, 'utf8');
    if (bytes.length > 0) sum += bytes[0]! + bytes[bytes.length - 1]!;
  }
  return sum;
}

/** What the read-cost probe counts: each mode fills its own fields. */
interface ReadCount {
  lines?: number;
  bytes?: number;
  sum?: number;
  tabs?: number;
  records?: number;
  sequence?: number;
  quality?: number;
}

/** One probe call on an instrumented instance; returns its output and the fuel it used. */
async function metered(text: string, mode: string): Promise<{ output: ReadCount; perByte: number }> {
  const sim = new HostSim({ allow: ['artifact.read'] });
  const id = sim.addArtifact(text);
  const exports = await sim.instantiate(probe);
  const added = exports as unknown as Record<string, unknown>;
  const meter = added[FUEL_EXPORT] as WebAssembly.Global<'i64'>;
  const budget = 10_000_000_000n;
  meter.value = budget;
  (added[START_EXPORT] as (() => void) | undefined)?.();
  const output = okOutput<ReadCount>(callTool(exports, { artifact: id, mode }));
  const fuel = Number(budget - meter.value);
  if (process.env.HELIX_READ_COST_PAGES) console.log(`${mode}: ${exports.memory.buffer.byteLength / 65536} pages`);
  return { output, perByte: fuel / Buffer.byteLength(text) };
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
      const all = lines(inputs[name]);
      const sequences: string[] = [];
      let quality = 0;
      if (name === 'fasta') {
        for (const line of all) {
          if (line.startsWith('>')) sequences.push('');
          else sequences[sequences.length - 1] += line;
        }
      } else {
        for (let i = 0; i < all.length; i += 4) {
          sequences.push(all[i + 1]!);
          quality += all[i + 3]!.length;
        }
      }
      const { output, perByte } = await metered(inputs[name], 'seq');
      expect(output).toMatchObject({
        records: sequences.length,
        sequence: sequences.join('').length,
        quality,
        sum: edgeSum(sequences),
      });
      console.log(`SeqReader.next on ${name}: ${perByte.toFixed(2)} fuel per byte`);
      costs[name] = perByte;
    }
    for (const [name, budget] of Object.entries(SEQ_BUDGET)) expect({ name, under: costs[name]! < budget }).toEqual({ name, under: true });
  }, 120_000);
});
