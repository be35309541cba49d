// The streaming record scanner: the same answer however the content is cut into pieces.
import { describe, expect, it } from 'vitest';
import { RecordScanner, type RecordSummary } from './record-scanner.js';

function scan(format: 'fasta' | 'fastq', pieces: string[], budget = 1 << 30): { records: RecordSummary[]; exhausted: boolean } {
  const scanner = new RecordScanner(format, budget);
  for (const p of pieces) if (scanner.push(Buffer.from(p, 'latin1'))) break;
  return { records: scanner.finish(), exhausted: scanner.exhausted };
}

/** Every way of cutting `text` in two, plus one byte per piece. */
function cuts(text: string): string[][] {
  const all = [[text], text.split('')];
  for (let i = 1; i < text.length; i++) all.push([text.slice(0, i), text.slice(i)]);
  return all;
}

const FASTA = '>chr1 Homo sapiens\r\nACGTacgt\r\nNNNN\r\n\r\n>chr2\nTT\n>empty\n>chr3\tdesc\nG';
const FASTA_RECORDS = [
  { id: 'chr1', length: 12 },
  { id: 'chr2', length: 2 },
  { id: 'empty', length: 0 },
  { id: 'chr3', length: 1 },
];
const FASTQ = '@r1 lane=1\r\nACGTN\r\n+\r\n@@@@@\r\n\n@r2\nGG\n+r2\nII\n@r3\nAAA\n+\nIII';

describe('RecordScanner', () => {
  it('RecordScanner reads FASTA ids and lengths across multi-line, CRLF and lowercase records, however the bytes are cut', () => {
    for (const pieces of cuts(FASTA)) expect(scan('fasta', pieces).records).toEqual(FASTA_RECORDS);
  });

  it('RecordScanner reads FASTQ records whose quality lines start with @, however the bytes are cut', () => {
    const expected = [
      { id: 'r1', length: 5 },
      { id: 'r2', length: 2 },
      { id: 'r3', length: 3 },
    ];
    for (const pieces of cuts(FASTQ)) expect(scan('fastq', pieces).records).toEqual(expected);
  });

  it('RecordScanner stops after five records', () => {
    const text = Array.from({ length: 9 }, (_, i) => `>s${i}\n${'A'.repeat(i + 1)}\n`).join('');
    const scanner = new RecordScanner('fasta', 1 << 30);
    expect(scanner.push(Buffer.from(text))).toBe(true);
    expect(scanner.finish().map((r) => r.id)).toEqual(['s0', 's1', 's2', 's3', 's4']);
  });

  it('RecordScanner counts a sequence line of many megabytes without keeping it', () => {
    const scanner = new RecordScanner('fasta', 1 << 30);
    scanner.push(Buffer.from('>big\n'));
    const block = Buffer.alloc(1 << 20, 0x41);
    for (let i = 0; i < 8; i++) scanner.push(block);
    scanner.push(Buffer.from('\n>next\nAC\n'));
    expect(scanner.finish()).toEqual([
      { id: 'big', length: 8 << 20 },
      { id: 'next', length: 2 },
    ]);
  });

  it('RecordScanner drops a record its budget cut short and says it ran out', () => {
    const result = scan('fasta', ['>a\nACGT\n>b\n', 'A'.repeat(100)], 20);
    expect(result.records).toEqual([{ id: 'a', length: 4 }]);
    expect(result.exhausted).toBe(true);
  });

  it('RecordScanner keeps at most 200 bytes of a very long id', () => {
    expect(scan('fasta', [`>${'x'.repeat(5000)} description\nAC\n`]).records[0]).toEqual({ id: 'x'.repeat(200), length: 2 });
  });

  it('RecordScanner ignores text before the first FASTA header and a FASTQ record cut before its quality line', () => {
    expect(scan('fasta', ['; comment\n>a\nAC\n']).records).toEqual([{ id: 'a', length: 2 }]);
    expect(scan('fastq', ['@a\nAC\n+\nII\n@b\nACGT\n']).records).toEqual([{ id: 'a', length: 2 }]);
  });
});
