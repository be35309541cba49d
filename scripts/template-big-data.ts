// An author's first tool on real-size data (sdk-guest/GUIDE.md, "A tool on a multi-GB file"):
// packs made by `helix new` in each language, built as made, read one generated FASTQ of any
// size through the real CLI under the embedded default policy, their budgets growing with the
// input (limits.perInputMiB). Every figure must be the generator's, and every language must write
// the same lengths TSV. test/template-big-data.test.ts runs it at 10 GB; `npm run bigdata:templates`
// at HELIX_BIG_DATA_BYTES (10 GB unless set), for HELIX_BIG_DATA_LANGS (as,c unless set), and prints the figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../host/1-base/paths.js';
import { type FastqFacts, generateFastq } from './fastq-generator.js';
import { runMeasuredCli } from './measured-cli.js';
import { callTemplate, helix, makeTemplatePack, type TemplateLanguage } from './template-packs.js';

/** The languages whose template tools read multi-GB files in CI (Extism's reads about 4 MB/s: sdk-guest/GUIDE.md). */
export const BIG_DATA_LANGUAGES: readonly TemplateLanguage[] = ['as', 'c'];

/** One template tool's call on the file. */
export interface TemplateStep {
  readonly lang: TemplateLanguage;
  readonly wallMs: number;
  readonly peakAnonBytes: number;
  readonly peakRssBytes: number;
  readonly output: Record<string, unknown>;
  readonly metrics: { duration_ms: number; fuel_used: number; memory_peak_pages: number };
  /** The sha256 of the lengths TSV the tool wrote, and its size. */
  readonly lengthsSha256: string;
  readonly lengthsBytes: number;
}

/** What a run found. */
export interface TemplateBigDataResult {
  readonly facts: FastqFacts;
  readonly generateMs: number;
  readonly importMs: number;
  readonly steps: TemplateStep[];
  /** Every figure that differs from the generator's, or a TSV that differs between languages; empty when all agree. */
  readonly mismatches: string[];
}

/**
 * Makes and builds a pack per language under a new directory in `parent`, generates `bytes` of
 * FASTQ, imports it, calls each tool on it, and removes it all, also on failure.
 */
export async function runTemplateBigData(
  bytes: number,
  parent: string = tmpdir(),
  langs: readonly TemplateLanguage[] = BIG_DATA_LANGUAGES,
): Promise<TemplateBigDataResult> {
  const dir = mkdtempSync(path.join(parent, 'helix-template-big-data-'));
  const home = path.join(dir, 'home');
  try {
    // The packs as an author makes them (`helix new`, then `helix build` in the pack), made
    // while the file is written.
    const file = path.join(dir, 'big.fastq');
    let t0 = Date.now();
    const [facts, packs] = await Promise.all([
      generateFastq(file, { bytes }).then((f) => ({ ...f, ms: Date.now() - t0 })),
      Promise.all(langs.map((lang) => makeTemplatePack(dir, lang))),
    ]);
    const generateMs = facts.ms;
    t0 = Date.now();
    const imported = await runMeasuredCli(['artifact', 'import', file, '--quiet', '--home', home], dir);
    if (imported.code !== 0) throw new Error(`artifact import failed (exit ${imported.code}): ${imported.stderr.slice(0, 2000)}`);
    const importMs = Date.now() - t0;
    const id = imported.stdout.trim();
    // The store holds its own copy now: the source can go before the calls.
    rmSync(file, { force: true });
    // The languages' calls run side by side: each is one process, mostly on one core.
    const steps = await Promise.all(
      packs.map(async (pack): Promise<TemplateStep> => {
        const { run, output, metrics } = await callTemplate(pack, id, home, dir);
        const lengths = JSON.parse(await helix(['artifact', 'show', String(output.lengths), '--home', home], dir)) as {
          sha256: string;
          size: number;
        };
        return {
          lang: pack.lang,
          wallMs: run.wallMs,
          peakAnonBytes: run.peakAnonBytes,
          peakRssBytes: run.peakRssBytes,
          output,
          metrics,
          lengthsSha256: lengths.sha256,
          lengthsBytes: lengths.size,
        };
      }),
    );
    return { facts, generateMs, importMs, steps, mismatches: mismatches(facts, steps) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function mismatches(facts: FastqFacts, steps: readonly TemplateStep[]): string[] {
  const out: string[] = [];
  for (const s of steps) {
    const want: Record<string, unknown> = { format: 'FASTQ', records: facts.records, total_length: facts.bases };
    for (const [field, value] of Object.entries(want))
      if (s.output[field] !== value)
        out.push(`${s.lang} ${field}: got ${JSON.stringify(s.output[field])}, expected ${JSON.stringify(value)}`);
  }
  const [first, ...rest] = steps;
  for (const s of rest)
    if (s.lengthsSha256 !== first!.lengthsSha256)
      out.push(
        `${s.lang} wrote a lengths TSV of ${s.lengthsBytes} bytes (${s.lengthsSha256}), ${first!.lang} one of ${first!.lengthsBytes} (${first!.lengthsSha256})`,
      );
  return out;
}

const mib = (b: number): string => `${(b / 1024 ** 2).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const bytes = Number(process.env.HELIX_BIG_DATA_BYTES ?? 10e9);
  const langs = (process.env.HELIX_BIG_DATA_LANGS?.split(',') ?? BIG_DATA_LANGUAGES) as TemplateLanguage[];
  process.stdout.write(`making a pack per language and ${mib(bytes)} of FASTQ under ${process.env.HELIX_BIG_DATA_DIR ?? tmpdir()} ...\n`);
  const r = await runTemplateBigData(bytes, process.env.HELIX_BIG_DATA_DIR, langs);
  process.stdout.write(
    `${r.facts.bytes} bytes, ${r.facts.records} reads, ${r.facts.bases} bases; generated in ${r.generateMs} ms, imported in ${r.importMs} ms\n`,
  );
  process.stdout.write(
    '| tool | wall ms | duration_ms | fuel_used | fuel per byte | MB/s in the tool | memory_peak_pages | peak anonymous memory |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n',
  );
  for (const s of r.steps) {
    const d = s.metrics.duration_ms;
    process.stdout.write(
      `| tpl.${s.lang} | ${s.wallMs} | ${d} | ${s.metrics.fuel_used} | ${(s.metrics.fuel_used / r.facts.bytes).toFixed(2)} | ${(r.facts.bytes / 1e6 / (d / 1000)).toFixed(0)} | ${s.metrics.memory_peak_pages} | ${mib(s.peakAnonBytes)} |\n`,
    );
  }
  process.stdout.write(r.mismatches.length === 0 ? 'every figure matches the generator\n' : `MISMATCHES:\n${r.mismatches.join('\n')}\n`);
  if (r.mismatches.length > 0) process.exitCode = 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.join(packageRoot(), 'dist', 'scripts', 'template-big-data.js'))
  await main();
