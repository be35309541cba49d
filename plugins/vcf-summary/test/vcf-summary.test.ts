// vcf.summary through the real host (createHost, LMDB, the WASM engine, fuel and memory
// limits): counts against an independent JS reference on generated VCFs (plain, gzip, CR LF,
// many samples, larger than the guest's memory ceiling), hand-counted fixtures, and a
// D-DATA-FORMAT error naming the line for each kind of malformed input.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackHost, type PackHost } from '../../../test/helpers/pack-host.js';

const PACK = fileURLToPath(new URL('..', import.meta.url));
const TOOL = 'vcf.summary';
let packs: PackHost;

beforeAll(async () => {
  packs = await startPackHost(['vcf-summary']);
}, 180_000);
afterAll(async () => {
  await packs?.close();
});

// ---- the JS reference -----------------------------------------------------------------

type AlleleClass = 'ref' | 'snv' | 'mnp' | 'indel' | 'symbolic' | 'other' | 'overlap';

/**
 * The class of one ALT allele, written from the rule in the README (htslib's): strip the
 * common prefix, then the common suffix while both sides keep a base, and compare what is left.
 * Returns the differing bases of an SNV too.
 */
function classifyAllele(ref: string, alt: string): { kind: AlleleClass; bases?: string } {
  if (alt === '*') return { kind: 'overlap' };
  if (alt === '.') return { kind: 'ref' };
  const r0 = ref.toUpperCase();
  const a0 = alt.toUpperCase();
  if (r0.length === 1 && a0.length === 1) return r0 === a0 || a0 === 'X' ? { kind: 'ref' } : { kind: 'snv', bases: r0 + a0 };
  if (['<*>', '<X>', '<NON_REF>'].includes(alt)) return { kind: 'ref' };
  if (alt.startsWith('<') || /[[\]]/.test(alt) || /^\.|\.$/.test(alt)) return { kind: 'symbolic' };
  let p = 0;
  while (p < r0.length && p < a0.length && r0[p] === a0[p]) p++;
  let r = r0.slice(p);
  let a = a0.slice(p);
  if (r === '' && a === '') return { kind: 'ref' };
  if (r === '' || a === '') return { kind: 'indel' };
  while (r.length > 1 && a.length > 1 && r.at(-1) === a.at(-1)) {
    r = r.slice(0, -1);
    a = a.slice(0, -1);
  }
  if (r.length === 1 && a.length === 1) return { kind: 'snv', bases: r + a };
  if (r.length === 1 || a.length === 1) return { kind: r.at(-1) === a.at(-1) ? 'indel' : 'other' };
  return { kind: r.length === a.length ? 'mnp' : 'other' };
}

const TRANSITIONS = new Set(['AG', 'GA', 'CT', 'TC']);

/** Everything vcf.summary reports for a well-formed VCF text. */
/** vcf.summary's output (schemas/output.json). */
interface VcfSummary {
  fileformat: string;
  records: number;
  samples: number;
  no_alts: number;
  snvs: number;
  mnps: number;
  indels: number;
  symbolic: number;
  others: number;
  multiallelic: number;
  multiallelic_snvs: number;
  alleles: Record<AlleleClass, number>;
  transitions: number;
  transversions: number;
  ts_tv: number | null;
  chromosomes: number;
  per_chromosome: Array<{ chrom: string; records: number }>;
  per_chromosome_truncated: boolean;
}

function reference(text: string): VcfSummary {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const fileformat = lines[0]!.slice('##fileformat='.length);
  const header = lines.find((l) => l.startsWith('#CHROM'))!.split('\t');
  const alleles: Record<AlleleClass, number> = { snv: 0, mnp: 0, indel: 0, symbolic: 0, other: 0, overlap: 0, ref: 0 };
  const sites: Record<AlleleClass, number> = { snv: 0, mnp: 0, indel: 0, symbolic: 0, other: 0, overlap: 0, ref: 0 };
  const perChromosome = new Map<string, number>();
  let records = 0,
    noAlts = 0,
    multi = 0,
    multiSnv = 0,
    ts = 0,
    tv = 0;
  for (const line of lines) {
    if (line === '' || line.startsWith('#')) continue;
    const [chrom, , , ref, alt] = line.split('\t') as [string, string, string, string, string];
    records++;
    perChromosome.set(chrom, (perChromosome.get(chrom) ?? 0) + 1);
    const kinds = new Set<AlleleClass>();
    const alts = alt.split(',');
    for (const allele of alts) {
      const { kind, bases } = classifyAllele(ref, allele);
      alleles[kind]++;
      kinds.add(kind);
      if (bases !== undefined && /^[ACGT]{2}$/.test(bases)) TRANSITIONS.has(bases) ? ts++ : tv++;
    }
    for (const kind of kinds) sites[kind]++;
    const variants = [...kinds].filter((k) => k !== 'ref' && k !== 'overlap');
    if (variants.length === 0) noAlts++;
    if (alts.length > 1) {
      multi++;
      if ([...kinds].filter((k) => k !== 'ref').join() === 'snv') multiSnv++;
    }
  }
  const chromosomes = [...perChromosome].map(([chrom, n]) => ({ chrom, records: n }));
  return {
    fileformat,
    records,
    samples: Math.max(0, header.length - 9),
    no_alts: noAlts,
    snvs: sites.snv,
    mnps: sites.mnp,
    indels: sites.indel,
    symbolic: sites.symbolic,
    others: sites.other,
    multiallelic: multi,
    multiallelic_snvs: multiSnv,
    alleles,
    transitions: ts,
    transversions: tv,
    ts_tv: tv === 0 ? null : ts / tv,
    chromosomes: chromosomes.length,
    per_chromosome: chromosomes.slice(0, 1000),
    per_chromosome_truncated: chromosomes.length > 1000,
  };
}

// ---- generated VCFs -------------------------------------------------------------------

interface VcfOptions {
  readonly records: number;
  readonly samples?: number;
  readonly chromosomes?: number;
  readonly eol?: string;
  readonly seed?: number;
}

/** A random VCF with every allele shape the classifier distinguishes, sorted by chromosome. */
function randomVcf({ records, samples = 3, chromosomes = 5, eol = '\n', seed = 1 }: VcfOptions): string {
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const base = () => 'ACGTacgtN'[rand(rand(4) === 0 ? 9 : 4)]!;
  const bases = (n: number) => Array.from({ length: n }, base).join('');
  const out: string[] = ['##fileformat=VCFv4.3', '##source=helix-test', '##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth">'];
  for (let c = 1; c <= chromosomes; c++) out.push(`##contig=<ID=chr${c}>`);
  const sampleNames = Array.from({ length: samples }, (_, i) => `S${i + 1}`);
  out.push(['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', ...(samples > 0 ? ['FORMAT', ...sampleNames] : [])].join('\t'));
  const alleleFor = (ref: string): string => {
    switch (rand(14)) {
      case 0:
        return '*';
      case 1:
        return '<DEL>';
      case 2:
        return `${ref[0]}[chr2:${1 + rand(1000)}[`;
      case 3:
        return ['<NON_REF>', '<*>', '.'][rand(3)]!;
      case 4:
        return ref + bases(1 + rand(5)); // insertion
      case 5:
        return ref.length > 1 ? ref.slice(0, 1 + rand(ref.length - 1)) : ref + bases(1); // deletion
      case 6:
        return bases(ref.length); // substitution of the same length: SNV, MNP or ref
      case 7:
        return bases(1 + rand(6)); // anything: often complex
      case 8:
        return ref[0] + bases(ref.length - 1) + ref.slice(1); // prefix kept, then the rest shifted: indel or complex
      default:
        return base(); // single base
    }
  };
  let chrom = 1;
  let pos = 1;
  for (let r = 0; r < records; r++) {
    if (rand(Math.max(1, Math.floor(records / chromosomes))) === 0 && chrom < chromosomes) chrom++;
    pos += 1 + rand(500);
    const ref = rand(3) === 0 ? bases(1 + rand(6)) : base();
    const alts = Array.from({ length: 1 + (rand(5) === 0 ? rand(3) : 0) }, () => alleleFor(ref));
    const genotypes = sampleNames.map(() => `${rand(2)}/${rand(2)}`);
    const fields = [
      `chr${chrom}`,
      String(pos),
      rand(2) ? '.' : `rs${rand(1e8)}`,
      ref,
      alts.join(','),
      String(rand(100)),
      'PASS',
      `DP=${rand(200)}`,
    ];
    out.push([...fields, ...(samples > 0 ? ['GT', ...genotypes] : [])].join('\t'));
  }
  return out.join(eol) + eol;
}

// ---- tests ----------------------------------------------------------------------------

describe('vcf.summary against the JS reference', () => {
  it('agrees on random VCFs of every allele shape, with and without samples', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const text = randomVcf({ records: 300 * seed, samples: seed % 3 === 0 ? 0 : seed, chromosomes: seed, seed });
      const output = await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(text) });
      expect({ seed, output }).toEqual({ seed, output: reference(text) });
    }
  });

  it('covers every class in those inputs (so the agreement means something)', () => {
    const counts = reference(randomVcf({ records: 1800, seed: 6, chromosomes: 6 }));
    for (const kind of ['snv', 'mnp', 'indel', 'symbolic', 'other', 'overlap', 'ref'] as const)
      expect(counts.alleles[kind], kind).toBeGreaterThan(10);
    expect(counts.multiallelic_snvs).toBeGreaterThan(0);
    expect(counts.multiallelic).toBeGreaterThan(counts.multiallelic_snvs);
  });

  it('reads gzip, multi-member gzip (as bgzip writes) and CR LF VCFs to the same counts', async () => {
    const text = randomVcf({ records: 2000, seed: 42, eol: '\r\n' });
    const expected = reference(text);
    expect(await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(text) })).toEqual(expected);
    expect(await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(gzipSync(text)) })).toEqual(expected);
    // bgzip writes a series of gzip members; the host reads them all.
    const lines = text.split(/(?<=\n)/);
    const members = [0, 1, 2, 3].map((i) => gzipSync(lines.slice((i * lines.length) / 4, ((i + 1) * lines.length) / 4).join('')));
    expect(await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(Buffer.concat(members)) })).toEqual(expected);
  });

  it('lists the first 1000 chromosomes and counts them all', async () => {
    let text = '##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n';
    for (let c = 0; c < 1200; c++) for (let r = 0; r <= c % 3; r++) text += `scaffold_${c}\t${r + 1}\t.\tA\tG\t.\t.\t.\n`;
    const output = await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(text) });
    expect(output).toEqual(reference(text));
    expect(output).toMatchObject({ chromosomes: 1200, per_chromosome_truncated: true, samples: 0, transitions: 2400, ts_tv: null });
    expect(output.per_chromosome).toHaveLength(1000);
  });

  it('reads header and record lines that a 1 MiB read piece cuts after their first byte', async () => {
    // The reader asks for 1 MiB pieces: pad the meta lines so that '#CHROM', then a record,
    // start on the last byte of a piece.
    const piece = 1 << 20;
    const first = '##fileformat=VCFv4.2\n';
    const pad = (length: number) => `##pad=${'x'.repeat(length - 7)}\n`;
    const header = '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n';
    const headerCut = `${first}${pad(piece - 1 - first.length)}${header}chr1\t1\t.\tA\tG\t.\t.\t.\tGT\t0/1\t1/1\n`;
    expect(headerCut.indexOf('#CHROM')).toBe(piece - 1);
    const records = 'chr1\t1\t.\tA\tG\t.\t.\t.\tGT\t0/1\t1/1\n'.repeat(100);
    const recordCut =
      first +
      pad(piece - 1 - first.length - header.length - records.length) +
      header +
      records +
      'chr2\t7\t.\tC\tT\t.\t.\t.\tGT\t0/0\t0/1\n';
    expect(recordCut.lastIndexOf('chr2')).toBe(piece - 1);
    for (const text of [headerCut, recordCut]) {
      const output = await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(text) });
      expect(output).toEqual(reference(text));
      expect(output.samples).toBe(2);
    }
  });
});

describe('vcf.summary on a hand-counted file', () => {
  it('counts each allele shape as bcftools stats does (see the README table)', async () => {
    const output = await packs.ok<VcfSummary>(TOOL, { vcf: await packs.put(await readFile(path.join(PACK, 'data/small.vcf'))) });
    // Counted by hand from data/small.vcf: 14 records; A>G, t>g, A>C,T, ACG>ATG (C>T), G>A,
    // T>*,C and C>T carry SNVs (8 SNV alleles: 5 transitions, 3 transversions).
    expect(output).toMatchObject({
      records: 14,
      samples: 3,
      no_alts: 1,
      snvs: 7,
      mnps: 1,
      indels: 3,
      symbolic: 2,
      others: 1,
      multiallelic: 3,
      multiallelic_snvs: 1,
      alleles: { snv: 8, mnp: 1, indel: 3, symbolic: 2, other: 1, overlap: 1, ref: 1 },
      transitions: 5,
      transversions: 3,
    });
    expect(output.ts_tv).toBeCloseTo(5 / 3, 12);
    expect(output).toEqual(reference(await readFile(path.join(PACK, 'data/small.vcf'), 'utf8')));
  });

  it('passes its fixtures through the host fixture runner', async () => {
    const results = await packs.fixtures(TOOL);
    expect(results.map((r) => r.fixture)).toEqual([
      'missing-artifact.json',
      'not-vcf.json',
      'short-record.json',
      'small-gzip.json',
      'small.json',
    ]);
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });
});

describe('vcf.summary errors', () => {
  const HEADER = '##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n';
  const cases: Array<[string, string, number, RegExp]> = [
    ['no fileformat line', '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n', 1, /first line is not ##fileformat/],
    ['a FASTA file', '>chr1\nACGT\n', 1, /first line is not ##fileformat/],
    ['too few columns', `${HEADER}chr1\t5\t.\tA\tG\t.\t.\t.\tGT\n`, 3, /9 columns, the header line 10/],
    ['too many columns', `${HEADER}chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\n\nchr1\t6\t.\tA\tG\t.\t.\t.\tGT\t0/1\t1/1\n`, 5, /11 columns/],
    ['a record before the header', '##fileformat=VCFv4.2\nchr1\t5\t.\tA\tG\t.\t.\t.\n', 2, /before the #CHROM header line/],
    ['no header at all', '##fileformat=VCFv4.2\n##source=x\n', 2, /no #CHROM header line/],
    [
      'a misnamed header column',
      '##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFOS\n',
      2,
      /header column 8 is 'INFOS', expected 'INFO'/,
    ],
    ['a short header', '##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\n', 2, /5 columns; a VCF has at least 8/],
    ['a meta line after the header', `${HEADER}##late=1\n`, 3, /meta-information line after/],
    ['a non-numeric POS', `${HEADER}chr1\t12a\t.\tA\tG\t.\t.\t.\tGT\t0/1\n`, 3, /POS '12a' is not a position/],
    ['an empty REF', `${HEADER}chr1\t12\t.\t\tG\t.\t.\t.\tGT\t0/1\n`, 3, /empty REF/],
    ['an empty ALT allele', `${HEADER}chr1\t12\t.\tA\tG,\t.\t.\t.\tGT\t0/1\n`, 3, /empty ALT allele/],
    [
      'CR LF lines',
      `${HEADER}chr1\t12\t.\tA\tG\t.\t.\t.\tGT\t0/1\r\nchr1\t13\t.\tA\tG\t.\t.\t.\tGT\r\n`.replace(/\n(?!$)/g, '\r\n'),
      4,
      /9 columns/,
    ],
  ];
  for (const [what, text, line, message] of cases) {
    it(`refuses ${what} with D-DATA-FORMAT at line ${line}`, async () => {
      const id = await packs.put(text);
      const error = await packs.error(TOOL, { vcf: id });
      expect(error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line, vcf: id } });
      expect(error.message).toMatch(new RegExp(`^not VCF: line ${line}: `));
      expect(error.message).toMatch(message);
      expect(error.hint).toMatch(/##fileformat=VCFv4.x/);
    });
  }

  it('refuses an empty artifact', async () => {
    const error = await packs.error(TOOL, { vcf: await packs.put('') });
    expect(error).toMatchObject({ code: 'D-DATA-FORMAT', message: 'not VCF: line 1: the artifact is empty' });
  });

  it('passes on a missing artifact as P-PRECOND-ARTIFACT-NOT-FOUND', async () => {
    expect(await packs.error(TOOL, { vcf: 'art_00000000000000000000000000' })).toMatchObject({ code: 'P-PRECOND-ARTIFACT-NOT-FOUND' });
  });
});

describe('vcf.summary limits', () => {
  it('streams a VCF larger than its memory ceiling, within the manifest fuel budget', async () => {
    const manifest = packs.tool(TOOL).loaded.manifest;
    const ceiling = manifest.limits.maxMemoryPages! * 65536;
    const text = randomVcf({ records: 120_000, samples: 40, chromosomes: 24, seed: 7 });
    expect(text.length).toBeGreaterThan(ceiling);
    const gz = gzipSync(text);
    for (const data of [text, gz]) {
      const response = await packs.call(TOOL, { vcf: await packs.put(data) });
      expect(response.status).toBe('success');
      expect(response.output).toEqual(reference(text));
      expect(response.metrics.memory_peak_pages).toBeLessThanOrEqual(manifest.limits.maxMemoryPages!);
      // The README's sizing: fuel per byte of VCF text, so 100 MB with 40 samples fits the budget.
      const perByte = response.metrics.fuel_used / text.length;
      expect(perByte * 100e6).toBeLessThan(manifest.limits.fuel!);
      process.stdout.write(
        `vcf.summary: ${text.length} bytes${data === gz ? ' (gzip)' : ''}, ${response.metrics.fuel_used} fuel, ${perByte.toFixed(2)} fuel/byte, ${response.metrics.memory_peak_pages} pages\n`,
      );
    }
  }, 120_000);
});
