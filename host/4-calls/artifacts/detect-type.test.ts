// Type detection on real heads: the formats Helix knows, plain and gzip, and the edge cases.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { detectType, gunzipHead, HEAD_BYTES, withTypeOverride } from './detect-type.js';

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(100)]);
const FASTQ = '@r1 lane=1\nACGTNACGTA\n+\nIIIIIIIIII\n@r2\nGGGCC\n+r2\n#####\n';
const FASTA_MULTILINE = '>chr1 human\nACGTACGTAC\nGTACGTAC\n>chr2\nTTTT\n';

describe('detectType', () => {
  const cases: Array<[string, Uint8Array, string, 'gzip' | null, string]> = [
    ['FASTA', enc('>seq1\nACGT\n'), 'fasta', null, 'text/x-fasta'],
    ['multi-line FASTA', enc(FASTA_MULTILINE), 'fasta', null, 'text/x-fasta'],
    ['lowercase FASTA', enc('>s\nacgtnacgt\nacg\n'), 'fasta', null, 'text/x-fasta'],
    ['CRLF FASTA', enc('>s1\r\nACGT\r\nAC\r\n>s2\r\nGG\r\n'), 'fasta', null, 'text/x-fasta'],
    ['gzip FASTA', gzipSync(enc(FASTA_MULTILINE)), 'fasta', 'gzip', 'text/x-fasta'],
    ['FASTQ', enc(FASTQ), 'fastq', null, 'text/x-fastq'],
    ['gzip FASTQ', gzipSync(enc(FASTQ)), 'fastq', 'gzip', 'text/x-fastq'],
    ['VCF', enc('##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\n1\t100\t.\tA\tG\n'), 'vcf', null, 'text/x-vcf'],
    ['SAM', enc('@HD\tVN:1.6\n@SQ\tSN:chr1\tLN:100\nr1\t0\tchr1\t1\t60\t4M\t*\t0\t0\tACGT\tIIII\n'), 'sam', null, 'text/x-sam'],
    ['JSON object', enc('{\n  "a": [1, 2],\n  "b": null\n}\n'), 'json', null, 'application/json'],
    ['JSON array', enc('[{"x":1},{"x":2}]'), 'json', null, 'application/json'],
    ['JSON Lines', enc('{"x":1}\n{"x":2}\n{"x":3}\n'), 'jsonl', null, 'application/x-ndjson'],
    ['CSV', enc('name,age,city\nann,31,"Paris, FR"\nbob,42,Oslo\n'), 'csv', null, 'text/csv'],
    ['TSV', enc('gene\tcount\tlength\nBRCA1\t12\t7088\nTP53\t40\t2512\n'), 'tsv', null, 'text/tab-separated-values'],
    ['PNG', PNG, 'png', null, 'image/png'],
    ['gzip of binary', gzipSync(randomBytes(4096)), 'gzip', null, 'application/gzip'],
    ['random binary', randomBytes(4096), 'binary', null, 'application/octet-stream'],
    ['empty content', new Uint8Array(0), 'empty', null, 'application/octet-stream'],
    ['plain text', enc('Dear reader,\nthis is prose, not a table.\nIt has lines of different shapes.\n'), 'text', null, 'text/plain'],
    ['UTF-8 text', enc('Grüße aus Köln — ünïcödé\n'), 'text', null, 'text/plain'],
  ];
  for (const [name, head, type, compression, media] of cases) {
    it(`detectType recognises ${name}`, () => {
      expect(detectType(head, { complete: true })).toEqual({ type, compression, media_type: media });
    });
  }

  it('detectType recognises JSON whose head is cut mid-document', () => {
    const doc = enc(JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `n${i}` })) }));
    expect(doc.length).toBeGreaterThan(HEAD_BYTES);
    expect(detectType(doc.subarray(0, HEAD_BYTES)).type).toBe('json');
  });

  it('detectType recognises FASTQ whose first read is longer than the head', () => {
    const read = 'ACGT'.repeat(40_000);
    expect(detectType(enc(`@long_read\n${read}\n+\n${'I'.repeat(read.length)}\n`)).type).toBe('fastq');
  });

  it('detectType forgives a UTF-8 character cut by the end of a partial head', () => {
    const text = enc('plain words é');
    expect(detectType(text.subarray(0, text.length - 1)).type).toBe('text');
    expect(detectType(text.subarray(0, text.length - 1), { complete: true }).type).toBe('binary');
  });

  it('detectType does not call lines of different field counts CSV', () => {
    expect(detectType(enc('a,b,c\nd,e\nf\n'), { complete: true }).type).toBe('text');
  });

  it('detectType does not call broken complete JSON json', () => {
    expect(detectType(enc('{"a": 1,'), { complete: true }).type).toBe('text');
  });

  it('withTypeOverride keeps the compression and takes the media type of the override', () => {
    const detected = detectType(gzipSync(enc(FASTQ)), { complete: true });
    expect(withTypeOverride(detected, 'text', true)).toEqual({ type: 'text', compression: 'gzip', media_type: 'text/plain' });
    expect(withTypeOverride(detected, 'bed', true)).toEqual({ type: 'bed', compression: 'gzip', media_type: 'text/plain' });
    expect(withTypeOverride(detectType(randomBytes(64), { complete: true }), 'bam', false).media_type).toBe('application/x-bam');
  });
});

describe('gunzipHead', () => {
  it('gunzipHead caps the output of a highly compressible head instead of inflating it all', () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x41));
    const out = gunzipHead(bomb, true, 1024);
    expect(out).not.toBeNull();
    expect(out!.bytes.length).toBeLessThanOrEqual(1024);
    expect(out!.complete).toBe(false);
  });

  it('gunzipHead returns null for bytes that are not gzip after the magic number', () => {
    expect(gunzipHead(Buffer.from([0x1f, 0x8b, 0x01, 0x02, 0x03]), true)).toBeNull();
  });
});
