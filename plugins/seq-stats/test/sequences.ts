// Test support shared by the sequence toolpacks' tests (seq.stats, fastq.filter): seeded
// FASTA/FASTQ generators with the edge cases real files have (multi-line, lowercase, N runs,
// gaps, empty records, CR LF, blank lines), and running seqkit as the reference on scratch
// files. The host side (packs built into a temporary host) is test/helpers/pack-host.ts.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's plugins/ folder. */
export const PLUGINS = fileURLToPath(new URL('../..', import.meta.url));

/** A temporary folder for reference input files: `file(name, data)` writes one and returns its path. */
export function scratchDir(): { file(name: string, data: string | Uint8Array): string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'helix-seq-reference-'));
  return {
    file(name, data) {
      const file = path.join(dir, name);
      writeFileSync(file, data);
      return file;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs a reference command (seqkit), failing the test with its stderr when it fails. */
export function runReference(command: string, args: readonly string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw result.error;
  // seqkit reports some errors ("[ERRO] ... invalid FASTA/Q format") and still exits 0.
  if (result.status !== 0 || result.stderr.includes('ERRO'))
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** A seeded generator (LCG), so every failure can be replayed from its seed. */
export function random(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % n;
  };
}

/** What to generate: `records` records of `minLength` (FASTQ only; default 0) to `maxLength` bases, LF or CR LF. */
export interface GeneratorOptions {
  readonly records: number;
  readonly minLength?: number;
  readonly maxLength: number;
  readonly crlf?: boolean;
}

function start(seed: number, options: GeneratorOptions): [(n: number) => number, string] {
  return [random(seed), options.crlf ? '\r\n' : '\n'];
}

/** Random FASTA: wrapped at varying widths, mixed case, N runs, gaps, spaces, empty records, blank lines. */
export function randomFasta(seed: number, options: GeneratorOptions): string {
  const [rand, eol] = start(seed, options);
  const codes = 'ACGTACGTACGTacgtacgtNnRYSWKM-.';
  // A leading blank line is LF only: seqkit 2.3.0 refuses a file that starts with a CR LF blank line.
  let out = rand(4) === 0 ? '\n' : '';
  for (let r = 0; r < options.records; r++) {
    out += `>seq${r} sample=${rand(1000)} desc${eol}`;
    const length = rand(6) === 0 ? 0 : rand(options.maxLength + 1);
    let sequence = '';
    while (sequence.length < length) {
      const roll = rand(40);
      sequence +=
        roll === 0 ? 'N'.repeat(1 + rand(60)) : roll === 1 ? '-'.repeat(1 + rand(10)) : roll === 2 ? ' ' : codes[rand(codes.length)];
    }
    sequence = sequence.slice(0, length);
    const width = rand(3) === 0 ? Math.max(1, length) : 1 + rand(120);
    for (let i = 0; i < sequence.length; i += width) {
      out += sequence.slice(i, i + width) + eol;
      if (rand(40) === 0) out += eol;
    }
  }
  // Sometimes no line end after the last line.
  return rand(3) === 0 ? out.replace(/\r?\n$/, '') : out;
}

/** Random 4-line FASTQ: lowercase and N bases, qualities over the whole phred+33 range, '+' lines with or without the id, blank lines between records. */
export function randomFastq(seed: number, options: GeneratorOptions): string {
  const [rand, eol] = start(seed, options);
  const bases = 'ACGTACGTACGTacgtNn';
  const parts: string[] = [];
  const minLength = options.minLength ?? 0;
  for (let r = 0; r < options.records; r++) {
    const length = minLength + rand(options.maxLength - minLength + 1);
    let sequence = '';
    let quality = '';
    // Reads of varying quality: a per-read centre so mean-quality filters have both sides.
    const centre = 2 + rand(40);
    for (let i = 0; i < length; i++) {
      sequence += rand(30) === 0 ? 'N' : bases[rand(bases.length)];
      quality += String.fromCharCode(33 + Math.max(0, Math.min(93, centre + rand(21) - 10)));
    }
    parts.push(`@read${r} lane=${rand(8)}${eol}${sequence}${eol}+${rand(2) === 0 ? `read${r}` : ''}${eol}${quality}${eol}`);
    if (rand(50) === 0) parts.push(eol);
  }
  const out = parts.join('');
  return rand(3) === 0 ? out.replace(/\r?\n$/, '') : out;
}

/**
 * FASTQ text of more than `bytes` bytes, made of randomFastq slices (seeds from `seed`) with
 * read names kept unique; every line ends in LF. For inputs larger than a tool's memory ceiling.
 */
export function fastqLargerThan(bytes: number, seed: number, minLength: number, maxLength: number): string {
  const slices: string[] = [];
  let size = 0;
  for (let n = 0; size <= bytes; n++) {
    const slice = randomFastq(seed + n, { records: 2000, minLength, maxLength })
      .replace(/\r?\n?$/, '\n')
      .replace(/@read/g, `@s${n}_`);
    slices.push(slice);
    size += slice.length;
  }
  return slices.join('');
}
