// The templates' costs, measured, for the guide (sdk-guest/GUIDE.md, "Budgets that grow with the
// data"): a pack per language made by `helix new` and built as made, each called on three
// generated files of 16 MiB (FASTQ with 100-150 and with 36-50 base reads, 60-column FASTA), and
// the fuel per input MiB and memory peak each call used, beside the rate the template's manifest
// declares. Fuel and memory are deterministic, so the table is the same on every machine:
// `npm run gen:costs` writes it into the guide between its markers, and
// test/template-costs.test.ts measures again and fails when the guide's table is not what it
// measured, or when a declared rate leaves less than a fifth of headroom.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { MIB } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { generateFastq } from './fastq-generator.js';
import { callTemplate, helix, makeTemplatePack, TEMPLATE_LANGUAGES, type TemplateLanguage } from './template-packs.js';

/** The size of each measured file. */
export const COST_FILE_BYTES = 16 * MIB;
/** The least headroom a declared rate must leave over the measured one. */
export const MIN_HEADROOM = 1.2;

/** The shapes of data measured, costliest per byte last within each format. */
export const SHAPES = [
  { id: 'fastq-150', label: 'FASTQ, 100-150 base reads' },
  { id: 'fastq-50', label: 'FASTQ, 36-50 base reads' },
  { id: 'fasta-60', label: 'FASTA, 60-column lines, 1-5 kb records' },
] as const;
export type ShapeId = (typeof SHAPES)[number]['id'];

/** One template on one file. */
export interface CostRow {
  readonly lang: TemplateLanguage;
  readonly shape: ShapeId;
  readonly fuelPerMiB: number;
  readonly memoryPeakPages: number;
  /** The template manifest's limits.perInputMiB.fuel. */
  readonly declaredPerMiB: number;
}

const LANGUAGE_NAMES: Record<TemplateLanguage, string> = { as: 'AssemblyScript', c: 'C', extism: 'Extism (AssemblyScript)' };

/** Writes about `bytes` of FASTA: records of 1,000-5,000 bases in 60-column lines, from a fixed seed. */
async function generateFasta(file: string, bytes: number): Promise<void> {
  let state = 7;
  const next = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  const out = await open(file, 'w');
  try {
    let written = 0;
    for (let r = 0; written < bytes; r++) {
      const length = 1000 + next(4001);
      let seq = '';
      for (let i = 0; i < length; i++) seq += 'ACGT'[next(4)];
      const text = `>contig${r} generated\n${seq.replace(/.{60}/g, '$&\n').replace(/\n?$/, '\n')}`;
      await out.write(text);
      written += text.length;
    }
  } finally {
    await out.close();
  }
}

/** The declared limits.perInputMiB.fuel of a language's template. */
export function declaredRate(lang: TemplateLanguage): number {
  const manifest = YAML.parse(readFileSync(path.join(packageRoot(), 'sdk-guest', 'templates', lang, '__NAME__.tool.yaml'), 'utf8')) as {
    limits: { perInputMiB?: { fuel?: number } };
  };
  return manifest.limits.perInputMiB?.fuel ?? 0;
}

/** Makes a pack per language and calls each on each shape; removes everything, also on failure. */
export async function measureTemplateCosts(langs: readonly TemplateLanguage[] = TEMPLATE_LANGUAGES): Promise<CostRow[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'helix-template-costs-'));
  const home = path.join(dir, 'home');
  try {
    const ids = new Map<ShapeId, { id: string; bytes: number }>();
    for (const shape of SHAPES) {
      const file = path.join(dir, `${shape.id}.${shape.id.startsWith('fasta') ? 'fa' : 'fq'}`);
      if (shape.id === 'fastq-150') await generateFastq(file, { bytes: COST_FILE_BYTES, seed: 3 });
      else if (shape.id === 'fastq-50')
        await generateFastq(file, { bytes: COST_FILE_BYTES, seed: 3, minReadLength: 36, maxReadLength: 50 });
      else await generateFasta(file, COST_FILE_BYTES);
      const record = JSON.parse(await helix(['artifact', 'import', file, '--home', home], dir)) as { id: string; size: number };
      ids.set(shape.id, { id: record.id, bytes: record.size });
    }
    // A language's pack is made and called on each file in turn; the languages run side by
    // side (fuel and memory do not depend on the machine's load).
    const perLanguage = await Promise.all(
      langs.map(async (lang) => {
        const rows: CostRow[] = [];
        const pack = await makeTemplatePack(dir, lang);
        // Measured under the default policy's ceiling rate, not the declared one: a rate too low
        // shows in the table (and fails the test) instead of stopping the measurement.
        const manifestFile = path.join(pack.dir, `tpl-${lang}.tool.yaml`);
        const manifest = YAML.parse(readFileSync(manifestFile, 'utf8')) as { limits: { perInputMiB: { fuel: number } } };
        manifest.limits.perInputMiB.fuel = 1_000_000_000;
        writeFileSync(manifestFile, YAML.stringify(manifest));
        for (const shape of SHAPES) {
          const input = ids.get(shape.id)!;
          const { metrics } = await callTemplate(pack, input.id, home, dir);
          rows.push({
            lang,
            shape: shape.id,
            fuelPerMiB: metrics.fuel_used / (input.bytes / MIB),
            memoryPeakPages: metrics.memory_peak_pages,
            declaredPerMiB: declaredRate(lang),
          });
        }
        return rows;
      }),
    );
    const rows = perLanguage.flat();
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A rate in millions with three significant digits: stable against a few units of fuel. */
function millions(x: number): string {
  const m = x / 1e6;
  return m >= 100 ? m.toFixed(0) : m >= 10 ? m.toFixed(1) : m.toFixed(2);
}

/** The guide's table of the measured rows. */
export function renderCostTable(rows: readonly CostRow[]): string {
  const lines = [
    '| template | data (16 MiB) | fuel per input MiB | fuel per byte | `memory_peak_pages` | declared `perInputMiB.fuel` | headroom |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const shape = SHAPES.find((s) => s.id === r.shape)!;
    lines.push(
      `| ${LANGUAGE_NAMES[r.lang]} | ${shape.label} | ${millions(r.fuelPerMiB)} million | ${(r.fuelPerMiB / MIB).toFixed(1)} | ${r.memoryPeakPages} | ${millions(r.declaredPerMiB)} million | ${(r.declaredPerMiB / r.fuelPerMiB).toFixed(1)}x |`,
    );
  }
  return lines.join('\n');
}

const START = '<!-- template-costs: generated by `npm run gen:costs` (scripts/template-costs.ts); do not edit -->';
const END = '<!-- template-costs: end -->';

/** The guide's file, and its generated table (the text between the markers), or undefined without markers. */
export function guideCostTable(guide = path.join(packageRoot(), 'sdk-guest', 'GUIDE.md')): { file: string; table: string | undefined } {
  const text = readFileSync(guide, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  return { file: guide, table: a < 0 || b < a ? undefined : text.slice(a + START.length, b).trim() };
}

/** Rows whose declared rate leaves less than MIN_HEADROOM over the measured one, as sentences. */
export function thinHeadroom(rows: readonly CostRow[]): string[] {
  return rows
    .filter((r) => r.declaredPerMiB < r.fuelPerMiB * MIN_HEADROOM)
    .map(
      (r) =>
        `${r.lang} on ${r.shape}: declares ${r.declaredPerMiB} fuel per MiB, measured ${Math.ceil(r.fuelPerMiB)} (at least ${Math.ceil(r.fuelPerMiB * MIN_HEADROOM)} wanted)`,
    );
}

async function main(): Promise<void> {
  const rows = await measureTemplateCosts();
  const table = renderCostTable(rows);
  const { file } = guideCostTable();
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${file} has no template-costs markers`);
  writeFileSync(file, `${text.slice(0, a + START.length)}\n${table}\n${text.slice(b)}`);
  process.stdout.write(`${table}\n`);
  const thin = thinHeadroom(rows);
  if (thin.length > 0) {
    process.stdout.write(`headroom below ${MIN_HEADROOM}x:\n${thin.join('\n')}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.join(packageRoot(), 'dist', 'scripts', 'template-costs.js'))
  await main();
