// seq.translate through the real host (createHost, LMDB, the WASM engine and its limits),
// compared byte for byte with `seqkit translate -x` (seqkit 2.3.0, the reference) on generated
// FASTA and FASTQ: multi-line, lowercase, IUPAC codes and N runs, gaps, CR LF, gzip, every
// frame option, and a file larger than the guest's memory ceiling.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostStore } from '../../../host/5-host/host.js';
import { startPackHost, type PackHost } from '../../../test/helpers/pack-host.js';

const TOOL = 'seq.translate';
const PACK = fileURLToPath(new URL('..', import.meta.url));
let packs: PackHost;
const scratch = mkdtempSync(path.join(tmpdir(), 'helix-translate-'));

beforeAll(async () => {
  packs = await startPackHost(['seq-translate']);
}, 180_000);
afterAll(async () => {
  await packs?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** What `seqkit translate -x <args>` prints for `text`. */
function seqkit(text: string | Buffer, args: string[], name = 'in.fa'): string {
  const file = path.join(scratch, name);
  writeFileSync(file, text);
  return execFileSync('seqkit', ['translate', '-x', ...args, file], { encoding: 'utf8', maxBuffer: 1 << 30 });
}

/**
 * seqkit 2.3.0 does not complement the ambiguity codes R Y K M B D H V in reverse frames (it
 * translates frame -1 of TRA as TRA, a stop, where the reverse complement is TYA, S or L: X).
 * Inputs compared with seqkit in reverse frames use only the self-complementary codes N S W;
 * the others are checked against seqkit's forward translation of `seqkit seq -r -p`.
 */
const ALL_CODES = 'ACGTACGTACGTACGTACGTacgtacgtacgtACGTRYKMSWBDHVNryn-. ';
const SELF_COMPLEMENTARY = 'ACGTACGTACGTACGTACGTacgtacgtacgtACGTSWNswn-. ';

/** Random nucleotide FASTA: wrapped at random widths, mixed case, N runs, IUPAC codes, gaps, spaces. */
function randomFasta(
  seed: number,
  records: number,
  options: { eol?: string; minLength?: number; maxLength?: number; codes?: string } = {},
): string {
  // The high bits of a linear congruential generator: its low bits repeat with short periods.
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((seed / 2 ** 31) * n);
  };
  // Mostly plain bases, so seqkit's alphabet guess (first 10,000 bases) sees DNA.
  const { eol = '\n', minLength = 3, maxLength = 3000, codes = SELF_COMPLEMENTARY } = options;
  let out = '';
  for (let r = 0; r < records; r++) {
    out += (rand(4) === 0 ? `>seq${r}` : `>seq${r} sample=${rand(1000)} desc "${r}"`) + eol;
    const length = minLength + rand(maxLength - minLength);
    let sequence = '';
    while (sequence.length < length) {
      const pick = rand(60);
      sequence += pick === 0 ? 'N'.repeat(1 + rand(20)) : pick === 1 ? '-'.repeat(1 + rand(7)) : codes[rand(codes.length)];
    }
    sequence = sequence.slice(0, length);
    const width = rand(3) === 0 ? length : 50 + rand(40);
    for (let i = 0; i < sequence.length; i += width) out += sequence.slice(i, i + width) + eol;
  }
  return out;
}

/** seq.translate's output (schemas/output.json). */
interface TranslateOutput {
  protein: string;
  records: number;
  translations: number;
  residues: number;
}

async function translate(
  data: string | Uint8Array,
  options: Record<string, unknown> = {},
): Promise<{ output: TranslateOutput; protein: string }> {
  const output = await packs.ok<TranslateOutput>(TOOL, { fasta: await packs.put(data), ...options });
  return { output, protein: (await packs.bytes(output.protein)).toString('utf8') };
}

const count = (fasta: string) => (fasta.match(/^>/gm) ?? []).length;

describe('seq.translate against seqkit translate -x', () => {
  const variants: Array<[Record<string, unknown>, string[]]> = [
    [{}, []],
    [{ frames: 'all6' }, ['-f', '6']],
    [{ frames: 'all6', append_frame: true }, ['-f', '6', '-F']],
    [{ frames: [2, -1], append_frame: true }, ['-f', '2,-1', '-F']],
    [{ frames: [-3, 3] }, ['-f', '-3,3']],
    [{ trim: true, frames: [1, -2] }, ['--trim', '-f', '1,-2']],
    [{ clean: true, frames: 'all6' }, ['--clean', '-f', '6']],
    [{ line_width: 0 }, ['-w', '0']],
    [{ line_width: 7, frames: [3] }, ['-w', '7', '-f', '3']],
  ];
  for (const [options, args] of variants) {
    it(`is identical for ${JSON.stringify(options)} (seqkit ${args.join(' ') || 'defaults'})`, async () => {
      const reverse = options.frames !== undefined && (options.frames === 'all6' || (options.frames as number[]).some((f) => f < 0));
      for (const seed of [1, 2, 3]) {
        const text = randomFasta(seed, 4 + seed * 3, { codes: reverse ? SELF_COMPLEMENTARY : ALL_CODES });
        const { output, protein } = await translate(text, options);
        expect({ seed, protein }).toEqual({ seed, protein: seqkit(text, args) });
        expect(output).toMatchObject({ records: 4 + seed * 3, translations: count(protein) });
      }
    });
  }

  it('reads gzip and CR LF input to the same output', async () => {
    const text = randomFasta(11, 12, { eol: '\r\n' });
    const expected = seqkit(text, ['-f', '6', '-F']);
    expect((await translate(text, { frames: 'all6', append_frame: true })).protein).toBe(expected);
    expect((await translate(gzipSync(text), { frames: 'all6', append_frame: true })).protein).toBe(expected);
  });

  it('translates FASTQ records as seqkit does', async () => {
    let seed = 5;
    // The high bits of a linear congruential generator: its low bits repeat with short periods.
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    let text = '';
    for (let r = 0; r < 30; r++) {
      const sequence = Array.from({ length: 3 + rand(150) }, () => 'ACGTN'[rand(5)]).join('');
      text += `@read${r} lane=1\n${sequence}\n+\n${'I'.repeat(sequence.length)}\n`;
    }
    const { protein } = await translate(text, { frames: [1, -1] });
    expect(protein).toBe(seqkit(text, ['-f', '1,-1'], 'in.fq'));
  });

  it('resolves ambiguous codons as seqkit does, for every pair of IUPAC codes around a base', async () => {
    const codes = 'ACGTRYSWKMBDHVN';
    let text = '';
    for (const a of codes)
      for (const b of codes) text += `>${a}${b}\n${[...'ACGT'].map((c) => a + b + c + a + c + b + c + a + b).join('')}\n`;
    expect((await translate(text, { frames: [1, 2, 3] })).protein).toBe(seqkit(text, ['-f', '1,2,3']));
    // Reverse frames: frame -k of a sequence is frame k of its reverse complement, which
    // `seqkit seq -r -p` computes with every IUPAC code complemented (R<->Y, K<->M, B<->V, D<->H).
    const file = path.join(scratch, 'forward.fa');
    writeFileSync(file, text);
    const reversed = execFileSync('seqkit', ['seq', '-r', '-p', '-t', 'dna', file], { encoding: 'utf8' });
    expect((await translate(text, { frames: [-1, -2, -3] })).protein).toBe(seqkit(reversed, ['-f', '1,2,3']));
    // The case seqkit translate itself gets wrong: TRA reversed is TYA (TCA S / TTA L).
    expect((await translate('>x\nTRA\n', { frames: [-1] })).protein).toBe('>x\nX\n');
  });
});

describe('seq.translate options beyond seqkit and its own rules', () => {
  it('to_stop cuts each translation before its first stop', async () => {
    const text = randomFasta(21, 8);
    const { protein } = await translate(text, { to_stop: true, line_width: 0, frames: [1, 2] });
    const cut = seqkit(text, ['-w', '0', '-f', '1,2']).replace(/^([^>\n]*?)\*.*$/gm, '$1');
    expect(protein).toBe(cut);
    expect(protein).not.toContain('*');
  });

  it('reads U as T in every frame (seqkit mistranslates RNA in reverse frames when the file starts as DNA)', async () => {
    const dna = randomFasta(31, 6, { codes: 'ACGTACGTacgtNSW-' });
    const rna = dna.replace(/^([^>].*)$/gm, (line) => line.replace(/T/g, 'U').replace(/t/g, 'u'));
    expect(rna).not.toBe(dna);
    expect((await translate(rna, { frames: 'all6' })).protein).toBe((await translate(dna, { frames: 'all6' })).protein);
    expect((await translate(rna, { frames: [1, 2, 3] })).protein).toBe(seqkit(rna, ['-f', '1,2,3']));
  });

  it('writes a record shorter than a codon (which seqkit refuses) as its header and an empty line', async () => {
    const { protein, output } = await translate('>empty\n>two\nAC\n>three\nATG\n', { frames: [1, 2] });
    expect(protein).toBe('>empty\n\n>empty\n\n>two\n\n>two\n\n>three\nM\n>three\n\n');
    expect(output).toMatchObject({ records: 3, translations: 6, residues: 1 });
  });

  it('writes an empty artifact for an input without records', async () => {
    const { protein, output } = await translate('\n\n');
    expect({ protein, output: { ...output, protein: undefined } }).toEqual({
      protein: '',
      output: { protein: undefined, records: 0, translations: 0, residues: 0 },
    });
  });

  it('labels the artifact and writes it as fasta under the protein role', async () => {
    const id = await packs.put('>a\nATG\n', 'my genes');
    const output = await packs.ok<TranslateOutput>(TOOL, { fasta: id });
    const response = await packs.call(TOOL, { fasta: id, label: 'mine' });
    const { getArtifact } = await import('../../../host/4-calls/artifacts/index.js');
    expect(getArtifact(hostStore(packs.host), output.protein)).toMatchObject({ type: 'fasta', label: 'translation of my genes' });
    expect(getArtifact(hostStore(packs.host), (response.output as TranslateOutput).protein)).toMatchObject({ label: 'mine' });
  });
});

describe('seq.translate errors', () => {
  it('refuses a protein or other non-nucleotide letter with D-DATA-FORMAT naming record and position', async () => {
    // Streamed (one forward frame) and held whole (two frames): the same error; the letter
    // sits in the second line of the record, after a piece boundary of the streamed path.
    const fasta = await packs.put('>ok\nACGT\n>prot1 x\nATGMK\nVLEQ\n');
    for (const frames of [[1], [1, -1]]) {
      const error = await packs.error(TOOL, { fasta, frames });
      expect(error).toMatchObject({
        code: 'D-DATA-FORMAT',
        message: "not a nucleotide sequence: record 2 (prot1), position 7: 'L' is not a nucleotide code",
        details: { record: 2, id: 'prot1', position: 7, character: 'L' },
      });
      expect(error.hint).toMatch(/IUPAC codes/);
    }
  });

  it('refuses a header over 1 MiB with I-REQ-TOO-LARGE, streamed or held', async () => {
    const fasta = await packs.put(`>${'h'.repeat(1024 * 1024 + 1)}\nATG\n`);
    for (const frames of [[1], [1, -1]]) {
      expect(await packs.error(TOOL, { fasta, frames })).toMatchObject({
        code: 'I-REQ-TOO-LARGE',
        details: { record: 1, max_bytes: 1024 * 1024 },
      });
    }
  });

  it('refuses text that is not FASTA with D-DATA-FORMAT from the reader', async () => {
    const error = await packs.error(TOOL, { fasta: await packs.put('gene\tcount\nBRCA1\t3\n') });
    expect(error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 1 } });
  });

  it('refuses a record over 8 Mi bases with I-REQ-TOO-LARGE when it must hold it (reverse or several frames)', async () => {
    const fasta = await packs.put(`>huge\n${'ACGT'.repeat(2 * 1024 * 1024 + 1)}\n`);
    for (const frames of [[1, -1], [-2], [1, 2]]) {
      const error = await packs.error(TOOL, { fasta, frames });
      expect(error).toMatchObject({ code: 'I-REQ-TOO-LARGE', details: { record: 1, max_bytes: 8 * 1024 * 1024 } });
    }
  }, 60_000);

  it('refuses frames outside 1, 2, 3, -1, -2, -3 before running', async () => {
    const response = await packs.call(TOOL, { fasta: await packs.put('>a\nATG\n'), frames: [4] });
    expect(response.status).toBe('invalid_request');
    expect(response.error?.code).toBe('I-REQ-INPUT');
  });

  it('passes its fixtures through the host fixture runner', async () => {
    const results = await packs.fixtures(TOOL);
    expect(results.map((r) => r.fixture)).toEqual([
      'missing-artifact.json',
      'not-nucleotide.json',
      'orfs-all6.json',
      'small-gzip.json',
      'small.json',
    ]);
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });

  it('has fixture expectations equal to seqkit output on the fixture data', async () => {
    const { readFile } = await import('node:fs/promises');
    const small = await readFile(path.join(PACK, 'data/small.fa'));
    expect(await readFile(path.join(PACK, 'data/small.protein.fa'), 'utf8')).toBe(seqkit(small, []));
    // All six frames on data without the codes seqkit fails to complement (see SELF_COMPLEMENTARY).
    const orfs = await readFile(path.join(PACK, 'data/orfs.fa'), 'utf8');
    expect(orfs.replace(/^>.*$/gm, '')).not.toMatch(/[RYKMBDHV]/i);
    expect(await readFile(path.join(PACK, 'data/orfs.all6.protein.fa'), 'utf8')).toBe(seqkit(orfs, ['-f', '6', '-F']));
  });
});

describe('seq.translate limits', () => {
  it('streams records of any length in one forward frame, identical to seqkit', async () => {
    // 12 Mi bases on 60-column lines and on one line: past the 8 Mi a record may hold.
    const rand = (() => {
      let seed = 9;
      return (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return Math.floor((seed / 2 ** 31) * n);
      };
    })();
    const sequence = Array.from({ length: 12 * 1024 * 1024 + 2 }, () => 'ACGTACGTacgtNRY-'[rand(16)]).join('');
    const wrapped = `>chrBig assembled\n${sequence.match(/.{1,60}/g)!.join('\n')}\n>tail\nATGAAATAG\n`;
    const single = `>chrBig one line\r\n${sequence}\r\n>tail\r\nATGAAATAG\r\n`;
    for (const [text, options, args] of [
      [wrapped, { frames: [2], append_frame: true }, ['-f', '2', '-F']],
      [single, { trim: true }, ['--trim']],
      [single, { frames: [3], line_width: 0 }, ['-f', '3', '-w', '0']],
    ] as const) {
      const { output, protein } = await translate(text, options);
      expect(protein === seqkit(text, [...args])).toBe(true);
      expect(output).toMatchObject({ records: 2, translations: 2 });
    }
  }, 180_000);

  it('streams a file larger than its memory ceiling, identical to seqkit, within the fuel budget', async () => {
    const manifest = packs.tool(TOOL).loaded.manifest;
    const ceiling = manifest.limits.maxMemoryPages! * 65536;
    let text = '';
    const block = randomFasta(77, 400, { maxLength: 2000 });
    while (text.length <= ceiling) text += block;
    const response = await packs.call(TOOL, { fasta: await packs.put(text), frames: [1, -1], append_frame: true });
    expect(response.status).toBe('success');
    const protein = (await packs.bytes((response.output as TranslateOutput).protein)).toString('utf8');
    expect(protein === seqkit(text, ['-f', '1,-1', '-F'])).toBe(true);
    expect(response.metrics.memory_peak_pages).toBeLessThanOrEqual(manifest.limits.maxMemoryPages!);
    const perByte = response.metrics.fuel_used / text.length;
    // The README's sizing: at this rate 50 MB of FASTA in two frames fits the manifest's budget.
    expect(perByte * 50e6).toBeLessThan(manifest.limits.fuel!);
    process.stdout.write(
      `seq.translate: ${text.length} bytes, 2 frames, ${response.metrics.fuel_used} fuel, ${perByte.toFixed(2)} fuel/byte, ${response.metrics.memory_peak_pages} pages\n`,
    );
  }, 180_000);
});
