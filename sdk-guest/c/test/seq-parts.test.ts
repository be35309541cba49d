// helix_seq_reader's parts (helix_seq_next_part), whole records and one-format restriction
// against the AssemblyScript SDK's SeqReader: twin probes (programs/seq-parts.c and the AS
// SDK's test/assembly/seq-probe.ts) read the same artifacts from the simulated broker at read
// sizes from 4 bytes up (so lines, CR LF pairs and records split across reads), and must give
// the same records, or the same error (code, message, hint, details). A FASTQ-only reader
// refuses FASTA naming what it found, and its hint names FASTQ alone; likewise FASTA-only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileC } from '../../../host/6-faces/toolchain/compile-c.js';
import { callTool, compileProgramBytes, type GuestEnvelope } from '../../assemblyscript/test/harness.js';
import { HostSim } from '../../assemblyscript/test/host-sim.js';
import { fasta, fastq } from '../../assemblyscript/test/read-inputs.js';
import { writeCPack } from './c-packs.js';

const root = mkdtempSync(path.join(tmpdir(), 'helix-c-parts-'));
let cProbe: WebAssembly.Module;
let asProbe: WebAssembly.Module;

beforeAll(async () => {
  const dir = writeCPack(root, { id: 'c.seqparts', program: 'seq-parts.c' });
  cProbe = new WebAssembly.Module((await compileC(dir, ['src/main.c'])).bytes);
  asProbe = new WebAssembly.Module(await compileProgramBytes('test/assembly/seq-probe.ts'));
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One probe call on `data`: the envelope (records and format, or the error), with the artifact id replaced. */
async function read(module: WebAssembly.Module, data: string, input: Record<string, unknown>): Promise<GuestEnvelope> {
  const sim = new HostSim({ allow: ['artifact.read'] });
  const id = sim.addArtifact(data);
  const outcome = callTool(await sim.instantiate(module), { ...input, artifact: id });
  if (outcome.kind !== 'output') throw new Error(`trap: ${String(outcome.error)} ${outcome.panic ?? ''}`);
  return JSON.parse(JSON.stringify(outcome.envelope).replaceAll(id, 'ID')) as GuestEnvelope;
}

/** Both readers on `data` with `input`, at every read size: asserts they agree, and returns the C reader's answer at the largest. */
async function both(data: string, input: Record<string, unknown> = {}, pieces = [4, 7, 64, 1 << 20]): Promise<GuestEnvelope> {
  let last: GuestEnvelope | undefined;
  for (const piece of pieces) {
    for (const mode of ['parts', 'records']) {
      const asked = { ...input, piece, mode };
      const c = await read(cProbe, data, asked);
      const as = await read(asProbe, data, asked);
      expect({ asked, envelope: c }).toEqual({ asked, envelope: as });
      last = c;
    }
  }
  return last!;
}

interface Records {
  records: Array<{ header: string; id?: string; sequence: string; quality: string; length: number; quality_length: number }>;
  format: string;
}

describe('helix_seq_reader next to SeqReader', () => {
  it('delivers the same records, from parts and whole, on FASTA and FASTQ split across reads', async () => {
    const inputs = [
      fasta(20_000),
      fastq(6000, 100, 150),
      fastq(3000).replaceAll('\n', '\r\n'),
      '\n \t\r\n>a x\r\nAC\rGT\r\nA\r\r\n\r\n>empty\r\n>b \t two words\r\nNN',
      '@r1\nACGT\n+r1\nIIII\n\n\n@r2 d\n\n+\n\n@r3\nA\n+\n#',
    ];
    for (const data of inputs) {
      const answer = (await both(data, {}, data.length > 1000 ? [64, 1 << 20] : undefined)).output as Records;
      expect(answer.records.length).toBeGreaterThan(2);
    }
    const odd = (await both(inputs[3]!)).output as Records;
    expect(odd.records.map((r) => [r.header, r.sequence])).toEqual([
      ['a x', 'AC\rGTA\r'],
      ['empty', ''],
      ['b \t two words', 'NN'],
    ]);
  }, 120_000);

  it('stops at malformed input with the same error: code, message, hint and details', async () => {
    const cases: Array<[string, RegExp]> = [
      [
        'id\tvalue\n',
        /^reading: not FASTA or FASTQ: line 1: expected a header line starting with '>' \(FASTA\) or '@' \(FASTQ\), found 'i' at column 1$/,
      ],
      [
        '@r\nACGT\n+\nIIII\n\n@s\nAC\nGT\n+\nIIII\n',
        /line 8: expected the '\+' line of record 2, found 'G' \(multi-line FASTQ is not supported\)$/,
      ],
      ['@r\r\nACGT\r\n+\r\nIII\r\n', /line 4: the quality of record 1 \(header on line 1\) is shorter than its sequence \(3 vs 4\)$/],
      ['@r\nACGT\n+\nII\u00e9I\n', /'U\+00C3' at column 3 is not a quality character/],
      ['@r\nAC\n+\nII\n>s\nAC\n', /^reading: not FASTQ: line 5: expected a '@' header line, found '>'$/],
      ['@r\nAC\n+\nII\n@s\nAC\n+', /line 7: the data ends inside record 2 \(header on line 5\), before its quality line$/],
    ];
    for (const [data, message] of cases) {
      const answer = await both(data, {}, [4, 6, 1 << 20]);
      expect(answer.error?.code).toBe('D-DATA-FORMAT');
      expect(answer.error?.message).toMatch(message);
      expect(answer.error?.hint).toMatch(/^pass FASTA \('>' header lines.* or FASTQ \(4-line records/);
    }
  }, 120_000);

  it('restricted to FASTQ, refuses FASTA naming what it found, and every hint names FASTQ alone', async () => {
    const fastqHint =
      "pass FASTQ (4-line records: '@' header, sequence, '+' line, quality of the same length, phred+33 '!'..'~'), plain or gzip";
    const refused = await both('\n>contig1\nACGT\n', { only: 'FASTQ' });
    expect(refused.error).toMatchObject({
      code: 'D-DATA-FORMAT',
      message: "reading: not FASTQ: line 2: expected a '@' header line, found '>' (FASTA; this tool reads FASTQ only)",
      hint: fastqHint,
      details: { line: 2, record: 0, format: '' },
    });
    const text = await both('id\tvalue\n', { only: 'FASTQ' });
    expect(text.error).toMatchObject({
      message: "reading: not FASTQ: line 1: expected a '@' header line, found 'i' at column 1",
      hint: fastqHint,
    });
    const short = await both('@r\nACGT\n+\nIII\n', { only: 'FASTQ' });
    expect(short.error?.hint).toBe(fastqHint);
    const read = (await both('@r\nACGT\n+\nIIII\n', { only: 'FASTQ' })).output as Records;
    expect(read).toEqual({
      records: [{ header: 'r', id: 'r', sequence: 'ACGT', quality: 'IIII', length: 4, quality_length: 4 }],
      format: 'FASTQ',
    });
  }, 120_000);

  it('restricted to FASTA, refuses FASTQ the same way', async () => {
    const refused = await both('@r\nACGT\n+\nIIII\n', { only: 'FASTA' });
    expect(refused.error).toMatchObject({
      message: "reading: not FASTA: line 1: expected a '>' header line, found '@' (FASTQ; this tool reads FASTA only)",
      hint: "pass FASTA ('>' header lines, each followed by sequence lines), plain or gzip",
    });
    const text = await both('  x\n', { only: 'FASTA' });
    expect(text.error?.message).toBe("reading: not FASTA: line 1: expected a '>' header line, found 'x' at column 3");
    expect(((await both('>a\nAC\n', { only: 'FASTA' })).output as Records).format).toBe('FASTA');
  }, 120_000);
});
