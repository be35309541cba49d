// The SDK's SeqReader (sdk-guest/assemblyscript/assembly/bio) against a JS reference parser,
// through a probe tool on the SDK's simulated broker: read pieces of every size from 5 bytes
// up put CR LF pairs, '>' and '@' line starts, headers and quality lines across piece
// boundaries, which 1 MiB pieces on the real host rarely do. Both the part API (`next`) and
// `nextRecord` must give the reference's records, and errors must name the right line.

import { beforeAll, describe, expect, it } from 'vitest';
import { callTool, compileProgram } from '../../../sdk-guest/assemblyscript/test/harness.js';
import { HostSim } from '../../../sdk-guest/assemblyscript/test/host-sim.js';
import { randomFasta, randomFastq } from './sequences.js';

let probe: WebAssembly.Module;

beforeAll(async () => {
  probe = await compileProgram('../../plugins/seq-stats/test/assembly/reader-probe.ts');
}, 120_000);

interface Rec {
  header: string;
  sequence: string;
  quality: string;
}

/** Reference: lines split at LF with a CR before it dropped; blank lines before the first record skipped. */
function reference(text: string): { format: string; records: Rec[] } {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.at(-1) === '') lines.pop();
  let i = 0;
  while (i < lines.length && /^[ \t\r]*$/.test(lines[i]!)) i++;
  const records: Rec[] = [];
  if (i === lines.length) return { format: '', records };
  if (lines[i]!.startsWith('>')) {
    for (; i < lines.length; i++) {
      if (lines[i]!.startsWith('>')) records.push({ header: lines[i]!.slice(1), sequence: '', quality: '' });
      else records.at(-1)!.sequence += lines[i];
    }
    return { format: 'FASTA', records };
  }
  while (i < lines.length) {
    if (/^[ \t\r]*$/.test(lines[i]!)) {
      i++;
      continue;
    }
    records.push({ header: lines[i]!.slice(1), sequence: lines[i + 1]!, quality: lines[i + 3]! });
    i += 4;
  }
  return { format: 'FASTQ', records };
}

/** What the reader probe answers: the records read, and the error that stopped it, if one did. */
interface ReadAnswer {
  format: string;
  records: Array<{ number: number; header: string; sequence: string; quality?: string }>;
  error_code?: string;
  error_message?: string;
  error_details?: Record<string, unknown>;
}

async function read(text: string | Uint8Array, mode: 'parts' | 'records', readPieceCap: number, gzip = false): Promise<ReadAnswer> {
  const sim = new HostSim({ allow: ['artifact.read'], readPieceCap });
  const id = sim.addArtifact(text, gzip ? { gzip: true } : {});
  const outcome = callTool(await sim.instantiate(probe), { artifact: id, mode, gzip });
  if (outcome.kind !== 'output' || outcome.envelope.status !== 'ok') throw new Error(`probe failed: ${JSON.stringify(outcome)}`);
  return outcome.envelope.output as ReadAnswer;
}

const PIECES = [5, 6, 7, 13, 64, 1 << 20];

describe('SeqReader', () => {
  it('gives the reference records for generated FASTA and FASTQ, LF and CR LF, at every read piece size, through both APIs', async () => {
    const inputs = [
      randomFasta(7, { records: 12, maxLength: 200 }),
      randomFasta(8, { records: 9, maxLength: 90, crlf: true }),
      randomFastq(9, { records: 15, maxLength: 40 }),
      randomFastq(10, { records: 15, maxLength: 40, crlf: true }),
    ];
    for (const [n, text] of inputs.entries()) {
      const expected = reference(text);
      expect(expected.records.length).toBeGreaterThan(0);
      for (const piece of PIECES) {
        for (const mode of ['parts', 'records'] as const) {
          const output = await read(text, mode, piece);
          expect(output.error_code).toBeUndefined();
          const records = output.records.map((r) => ({ header: r.header, sequence: r.sequence, quality: r.quality }));
          expect({ n, piece, mode, format: output.format, records }).toEqual({ n, piece, mode, ...expected });
          expect(output.records.map((r) => r.number)).toEqual(expected.records.map((_, i) => i + 1));
        }
      }
    }
  });

  it('keeps spaces, tabs and case in FASTA sequence lines, reads empty records, headers of any length, and gzip', async () => {
    const long = 'h'.repeat(3000);
    const text = `\n \t\r\n>${long} x\r\nac GT\tn\r\n\r\n  \r\n>empty\r\n>last\r\nNN`;
    for (const piece of [5, 7, 100]) {
      // The simulated host stores the text gzip-compressed and gunzips it on read.
      const output = await read(text, 'records', piece, true);
      expect(output.records).toEqual([
        { header: `${long} x`, id: long, sequence: 'ac GT\tn  ', quality: '', number: 1 },
        { header: 'empty', id: 'empty', sequence: '', quality: '', number: 2 },
        { header: 'last', id: 'last', sequence: 'NN', quality: '', number: 3 },
      ]);
    }
  });

  it('reads an empty input and blank lines alone as no records, with no format', async () => {
    for (const text of ['', '\n', '\r\n \t\n\n']) expect(await read(text, 'parts', 5)).toEqual({ format: '', records: [] });
  });

  it('stops at malformed input with D-DATA-FORMAT naming the line, at every piece size', async () => {
    const cases: Array<[string, number, RegExp]> = [
      [
        'id\tvalue\n',
        1,
        /^not FASTA or FASTQ: line 1: expected a header line starting with '>' \(FASTA\) or '@' \(FASTQ\), found 'i' at column 1$/,
      ],
      ['\n\n  x\n>a\nAC\n', 3, /found 'x' at column 3$/],
      [
        '@r\nACGT\n+\nIIII\n\n@s\nAC\nGT\n+\nIIII\n',
        8,
        /^not FASTQ: line 8: expected the '\+' line of record 2, found 'G' \(multi-line FASTQ is not supported\)$/,
      ],
      ['@r\r\nACGT\r\n+\r\nIII\r\n', 4, /the quality of record 1 \(header on line 1\) is shorter than its sequence \(3 vs 4\)$/],
      ['@r\nAC\n+\nIII\n', 4, /is longer than its sequence \(more than 3 vs 2\)$/],
      ['@r\nACGT\n+\nII\u00e9I\n', 4, /'U\+00C3' at column 3 is not a quality character/],
      ['@r\nAC\n+\nII\n>s\nAC\n', 5, /^not FASTQ: line 5: expected a '@' header line, found '>'$/],
      ['@r\nAC\n+\nII\n@s\nAC\n+', 7, /the data ends inside record 2 \(header on line 5\), before its quality line$/],
      ['@r\nAC', 2, /the data ends inside record 1 \(header on line 1\), before its '\+' and quality lines$/],
    ];
    for (const [text, line, message] of cases) {
      for (const piece of [5, 6, 1 << 20]) {
        const output = await read(text, 'parts', piece);
        expect({ text, piece, code: output.error_code, line: output.error_details?.line }).toEqual({
          text,
          piece,
          code: 'D-DATA-FORMAT',
          line,
        });
        expect(output.error_message).toMatch(message);
      }
    }
  });

  it('delivers the records before an error', async () => {
    const output = await read('@a\nAC\n+\nII\n@b\nACG\n+\nII\n', 'records', 6);
    expect(output.records.map((r) => r.header)).toEqual(['a']);
    expect(output.error_details).toMatchObject({ record: 2, line: 8, sequence_length: 3, quality_length: 2, format: 'FASTQ' });
  });
});
