// helix.h's streaming FASTA/FASTQ reader (helix_seq_reader), built with clang into a test tool
// and called through the real host: its records agree with seqkit on the bundled packs' data
// files and on generated files, and its counts and errors agree with the AssemblyScript SDK's
// SeqReader (the bundled seq.stats, built on it, in the same host), at read pieces from 4
// bytes up, so records, lines, CR LF pairs and characters are split across pieces.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireError } from '../../../abi/index.js';
import { importInline } from '../../../host/4-calls/artifacts/prepare-artifact.js';
import { buildToolpack } from '../../../host/6-faces/toolchain/build-toolpack.js';
import { hostStore } from '../../../host/5-host/host.js';
import { createHost, type Host } from '../../../host/index.js';
import { randomFasta, randomFastq, runReference, scratchDir } from '../../../plugins/seq-stats/test/sequences.js';
import { REPO, writeCPack } from './c-packs.js';

let host: Host;
const root = mkdtempSync(path.join(tmpdir(), 'helix-c-seq-'));
const scratch = scratchDir();

beforeAll(async () => {
  const plugins = path.join(root, 'plugins');
  await buildToolpack(writeCPack(plugins, { id: 'c.seq', program: 'seq.c' }));
  // The AssemblyScript reader, as the bundled seq.stats uses it (built by npm run build).
  cpSync(path.join(REPO, 'plugins', 'seq-stats'), path.join(plugins, 'seq-stats'), { recursive: true });
  host = await createHost({ toolpacksDir: plugins, home: path.join(root, 'home') });
}, 120_000);

afterAll(async () => {
  await host?.close();
  rmSync(root, { recursive: true, force: true });
  scratch.cleanup();
});

interface Rec {
  id: string;
  header: string;
  length: number;
  sequence?: string;
  quality?: string;
}

async function store(data: string | Uint8Array, label: string): Promise<string> {
  return (await importInline(hostStore(host), data, { label })).id;
}

/** One record as c.seq reports it. */
interface CRecord extends Rec {
  description?: string;
  line?: number;
}

/** What c.seq answers: its records and totals, or (and then only) the call's error. */
interface CSeqAnswer {
  records: CRecord[];
  format: string;
  total_length: number;
  error?: WireError;
}

/** The fields of seq.stats's output that c.seq is compared with. */
interface SeqStats {
  format: string;
  num_seqs: number;
  sum_len: number;
}

async function readC(id: string, piece: number, keep = true): Promise<CSeqAnswer> {
  const r = await host.call({ tool_id: 'c.seq', input: { artifact: id, piece, keep } });
  return (r.error ? { error: r.error } : r.output) as CSeqAnswer;
}

/** seqkit's view of a file: header, id, sequence and (FASTQ) quality of every record. */
function seqkit(file: string): Rec[] {
  const lines = (args: string[]) => {
    const text = runReference('seqkit', ['seq', ...args, file]);
    return text.length === 0 ? [] : text.replace(/\n$/, '').split('\n');
  };
  const headers = lines(['-n']);
  const ids = lines(['-n', '-i']);
  const sequences = lines(['-s', '-w', '0']);
  const fastq = /\.fq(\.gz)?$|\.fastq$/.test(file);
  const qualities = fastq ? lines(['-q', '-w', '0']) : [];
  return headers.map((header, i) => ({
    id: ids[i]!,
    header,
    length: Buffer.byteLength(sequences[i]!),
    sequence: sequences[i]!,
    ...(fastq ? { quality: qualities[i]! } : {}),
  }));
}

/** The bundled packs' FASTA and FASTQ data files, plain and gzip. */
const dataFiles = readdirSync(path.join(REPO, 'plugins'))
  .flatMap((pack) => {
    const dir = path.join(REPO, 'plugins', pack, 'data');
    try {
      return readdirSync(dir).map((f) => path.join(dir, f));
    } catch {
      return [];
    }
  })
  .filter((file) => /\.(fa|fq)(\.gz)?$/.test(file));

describe('helix_seq_reader', () => {
  it('reads every bundled FASTA and FASTQ data file as seqkit does, at every piece size', async () => {
    expect(dataFiles.length).toBeGreaterThanOrEqual(10);
    for (const file of dataFiles) {
      const expected = seqkit(file);
      const id = await store(readFileSync(file), path.basename(file));
      for (const piece of [4, 7, 64, 1 << 20]) {
        const out = await readC(id, piece);
        expect(out.error, `${file} piece ${piece}`).toBeUndefined();
        const records = out.records.map((r) => ({
          id: r.id,
          header: r.header,
          length: r.length,
          sequence: r.sequence,
          ...(r.quality !== undefined ? { quality: r.quality } : {}),
        }));
        expect({ file, piece, records }).toEqual({ file, piece, records: expected });
      }
    }
  }, 300_000);

  it('counts as the AssemblyScript SeqReader does (seq.stats), and as seqkit does, on generated files split across pieces', async () => {
    const inputs = [
      randomFasta(7, { records: 20, maxLength: 300 }),
      randomFasta(8, { records: 20, maxLength: 200, crlf: true }),
      randomFastq(9, { records: 25, maxLength: 60 }),
      randomFastq(10, { records: 25, maxLength: 60, crlf: true }),
    ];
    for (const [n, text] of inputs.entries()) {
      const expected = seqkit(scratch.file(`in${n}.${text.startsWith('@') ? 'fastq' : 'fasta'}`, text));
      for (const [label, data] of [
        [`in${n}`, text],
        [`in${n}.gz`, gzipSync(text)],
      ] as const) {
        const id = await store(data, label);
        const stats = await host.call({ tool_id: 'seq.stats', input: { sequences: id } });
        expect(stats.error).toBeUndefined();
        for (const piece of [7, 1 << 20]) {
          for (const keep of [true, false]) {
            const out = await readC(id, piece, keep);
            expect(out.error).toBeUndefined();
            expect(out.records.map((r) => [r.id, r.length])).toEqual(expected.map((r) => [r.id, r.length]));
            expect({ n, label, piece, keep, format: out.format, records: out.records.length, total: out.total_length }).toEqual({
              n,
              label,
              piece,
              keep,
              format: (stats.output as SeqStats).format,
              records: (stats.output as SeqStats).num_seqs,
              total: (stats.output as SeqStats).sum_len,
            });
            if (keep) expect(out.records.map((r) => r.sequence)).toEqual(expected.map((r) => r.sequence));
            else expect(out.records.every((r) => r.sequence === undefined && r.quality === undefined)).toBe(true);
          }
        }
      }
    }
  }, 300_000);

  it('keeps spaces, tabs and case in sequence lines, reads empty records, long headers, blank input, and splits the id from the description', async () => {
    const long = 'h'.repeat(3000);
    const id = await store(`\n \t\r\n>${long} x\r\nac GT\tn\r\n\r\n  \r\n>empty\r\n>last \t two words\r\nNN`, 'odd.fa');
    for (const piece of [4, 7, 100]) {
      const out = await readC(id, piece);
      expect(out.records.map(({ line: _line, ...r }) => r)).toEqual([
        { id: long, header: `${long} x`, description: 'x', length: 9, sequence: 'ac GT\tn  ' },
        { id: 'empty', header: 'empty', description: '', length: 0, sequence: '' },
        { id: 'last', header: 'last \t two words', description: 'two words', length: 2, sequence: 'NN' },
      ]);
      expect(out.records.map((r) => r.line)).toEqual([3, 7, 8]);
    }
    for (const text of ['', '\n', '\r\n \t\n\n'])
      expect(await readC(await store(text, 'blank.txt'), 4)).toEqual({ records: [], format: '', total_length: 0 });
  });

  it('treats a CR as a line end only before an LF, wherever the pieces split, as the AssemblyScript SeqReader does', async () => {
    const text = '>a\r\nAC\rGT\r\nA\r\r\n>b x\r\n\r\nGG\r';
    const id = await store(text, 'cr.fa');
    const stats = await host.call({ tool_id: 'seq.stats', input: { sequences: id } });
    expect(stats.error).toBeUndefined();
    for (const piece of [3, 4, 5, 6, 1 << 20]) {
      const out = await readC(id, piece);
      expect({ piece, records: out.records.map((r) => [r.header, r.sequence]) }).toEqual({
        piece,
        records: [
          ['a', 'AC\rGTA\r'],
          ['b x', 'GG'],
        ],
      });
      expect(out.total_length).toBe((stats.output as SeqStats).sum_len);
    }
  });

  it('stops at malformed input with D-DATA-FORMAT naming the line, as the AssemblyScript SeqReader does, at every piece size', async () => {
    // The cases and messages of the AssemblyScript reader's own test (plugins/seq-stats/test/reader.test.ts).
    const cases: Array<[string, number, RegExp]> = [
      [
        'id\tvalue\n',
        1,
        /^reading: not FASTA or FASTQ: line 1: expected a header line starting with '>' \(FASTA\) or '@' \(FASTQ\), found 'i' at column 1$/,
      ],
      ['\n\n  x\n>a\nAC\n', 3, /found 'x' at column 3$/],
      [
        '@r\nACGT\n+\nIIII\n\n@s\nAC\nGT\n+\nIIII\n',
        8,
        /^reading: not FASTQ: line 8: expected the '\+' line of record 2, found 'G' \(multi-line FASTQ is not supported\)$/,
      ],
      ['@r\r\nACGT\r\n+\r\nIII\r\n', 4, /the quality of record 1 \(header on line 1\) is shorter than its sequence \(3 vs 4\)$/],
      ['@r\nAC\n+\nIII\n', 4, /is longer than its sequence \(more than 3 vs 2\)$/],
      ['@r\nACGT\n+\nII\u00e9I\n', 4, /'U\+00C3' at column 3 is not a quality character/],
      ['@r\nAC\n+\nII\n>s\nAC\n', 5, /^reading: not FASTQ: line 5: expected a '@' header line, found '>'$/],
      ['@r\nAC\n+\nII\n@s\nAC\n+', 7, /the data ends inside record 2 \(header on line 5\), before its quality line$/],
      ['@r\nAC', 2, /the data ends inside record 1 \(header on line 1\), before its '\+' and quality lines$/],
    ];
    for (const [text, line, message] of cases) {
      const id = await store(text, 'bad.txt');
      const stats = await host.call({ tool_id: 'seq.stats', input: { sequences: id } });
      for (const piece of [4, 6, 1 << 20]) {
        const out = await readC(id, piece);
        expect({ text, piece, code: out.error?.code, line: out.error?.details.line }).toEqual({ text, piece, code: 'D-DATA-FORMAT', line });
        expect(out.error?.message).toMatch(message);
        expect(out.error?.hint).toContain("pass FASTA ('>' header lines");
        expect(out.error?.details).toEqual({ ...stats.error?.details, artifact_id: id });
      }
    }
  });

  it('refuses a kept record over max_record_bytes with I-REQ-TOO-LARGE, and counts it when not kept', async () => {
    const id = await store(`>a\n${'A'.repeat(50)}\n${'C'.repeat(50)}\n`, 'long.fa');
    const r = await host.call({ tool_id: 'c.seq', input: { artifact: id, piece: 16, max_record: 64 } });
    expect(r.error).toMatchObject({ code: 'I-REQ-TOO-LARGE', details: { record: 1, line: 1 } });
    expect(r.error?.message).toMatch(/the sequence of record 1 \(line 1\) is longer than 64 bytes/);
    const counted = await host.call({ tool_id: 'c.seq', input: { artifact: id, piece: 16, max_record: 64, keep: false } });
    expect(counted.output).toMatchObject({ total_length: 100 });
  });

  it("passes a missing artifact's code on", async () => {
    const r = await host.call({ tool_id: 'c.seq', input: { artifact: 'art_00000000000000000000000000' } });
    expect(r.error?.code).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
  });
});
