// Generated inputs and the metered call of the read-cost tests (this SDK's and the C SDK's):
// deterministic FASTA, FASTQ and TSV text, the reference line split, and one tool call on a
// module instrumented by the host's own instrumenter, against the simulated broker, with the
// fuel it used per input byte.

import { FUEL_EXPORT, instrumentModule, START_EXPORT } from '../../../host/2-sandbox/wasm/index.js';
import { callTool, okOutput } from './harness.js';
import { HostSim } from './host-sim.js';

/** A deterministic stream of pseudo-random numbers below `n`. */
export function random(seed: number): (n: number) => number {
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
export function fasta(size: number): string {
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

/** About `size` bytes of FASTQ: reads of `minLength` to `maxLength` bases (100 by default). */
export function fastq(size: number, minLength = 100, maxLength = minLength): string {
  const next = random(2);
  const parts: string[] = [];
  let total = 0;
  for (let r = 0; total < size; r++) {
    const length = minLength + next(maxLength - minLength + 1);
    let quality = '';
    for (let i = 0; i < length; i++) quality += String.fromCharCode(33 + next(41));
    const text = `@read${r}/1 sample=S1\n${bases(next, length)}\n+\n${quality}\n`;
    parts.push(text);
    total += text.length;
  }
  return parts.join('');
}

/** About `size` bytes of VCF-like TSV: 10 tab-separated columns a line, genotypes, 'é' now and then. */
export function tsv(size: number): string {
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
export function lines(text: string): string[] {
  const all = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (text.endsWith('\n')) all.pop();
  return all;
}

/** The first plus the last byte of every non-empty string. */
export function edgeSum(strings: string[]): number {
  let sum = 0;
  for (const s of strings) {
    const bytes = Buffer.from(s, 'utf8');
    if (bytes.length > 0) sum += bytes[0]! + bytes[bytes.length - 1]!;
  }
  return sum;
}

/** What the read-cost probes count: each mode fills its own fields. */
export interface ReadCount {
  lines?: number;
  bytes?: number;
  sum?: number;
  tabs?: number;
  records?: number;
  sequence?: number;
  quality?: number;
}

/** The sequences, the quality bytes and the record count of generated FASTA or FASTQ, as a reader must find them. */
export function expectedRecords(text: string): { records: number; sequence: number; quality: number; sum: number } {
  const all = lines(text);
  const sequences: string[] = [];
  let quality = 0;
  if (text.startsWith('>')) {
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
  return { records: sequences.length, sequence: sequences.join('').length, quality, sum: edgeSum(sequences) };
}

/** A module as the host runs it: instrumented by the host's instrumenter. */
export function instrumented(bytes: Uint8Array, maxMemoryPages = 1024): WebAssembly.Module {
  return new WebAssembly.Module(instrumentModule(bytes, { maxMemoryPages }).bytes);
}

/**
 * One call of `module` (instrumented) on `text` stored as an artifact, with `input` and the
 * artifact's id as `artifact`; its output, the fuel it used per byte of `text`, and the pages
 * of memory it ended with.
 */
export async function metered<T = ReadCount>(
  module: WebAssembly.Module,
  text: string,
  input: Record<string, unknown>,
): Promise<{ output: T; perByte: number; pages: number }> {
  const sim = new HostSim({ allow: ['artifact.read', 'artifact.stat'] });
  const id = sim.addArtifact(text);
  const exports = await sim.instantiate(module);
  const added = exports as unknown as Record<string, unknown>;
  const meter = added[FUEL_EXPORT] as WebAssembly.Global<'i64'>;
  const budget = 10_000_000_000n;
  meter.value = budget;
  (added[START_EXPORT] as (() => void) | undefined)?.();
  const output = okOutput<T>(callTool(exports, { ...input, artifact: id }));
  const fuel = Number(budget - meter.value);
  return { output, perByte: fuel / Buffer.byteLength(text), pages: exports.memory.buffer.byteLength / 65536 };
}
