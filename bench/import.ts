// `helix artifact import` measured against `sha256sum` on the same file, alternated, each import
// on a fresh store; and the import's peak RSS on a file and on a larger one (flat memory: a ratio
// near 1).
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { median } from './stats.js';
import { timeHelix, timeProcess } from './processes.js';

/** What measureImport measures; both files lie in one directory, the import root. */
export interface ImportOptions {
  readonly file: string;
  /** A larger file for the peak-RSS comparison. */
  readonly largeFile: string;
  /** Alternated runs of sha256sum and import (the median of each is reported). */
  readonly runs: number;
}

/** Medians in ms, peak RSS in bytes. */
export interface ImportFigures {
  readonly importMs: number;
  readonly sha256sumMs: number;
  readonly runs: number;
  readonly peakRssBytes: number;
  readonly largePeakRssBytes: number;
  readonly largeRuns: number;
}

/** Imports `file` into a new store `runs` times (and `largeFile` up to twice), each beside a sha256sum of it. */
export async function measureImport(options: ImportOptions): Promise<ImportFigures> {
  const dir = path.dirname(options.file);
  const importOnce = async (file: string): Promise<{ ms: number; rss: number }> => {
    const home = mkdtempSync(path.join(dir, 'home-'));
    try {
      const t = await timeHelix(['artifact', 'import', path.basename(file), '--home', home], { cwd: dir, probe: true });
      return { ms: t.ms, rss: t.maxRssBytes! };
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };
  // One unmeasured pass of each, so the file is in the page cache for both sides alike.
  await timeProcess('sha256sum', [options.file]);
  await importOnce(options.file);
  const sha: number[] = [];
  const imports: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    sha.push((await timeProcess('sha256sum', [options.file])).ms);
    const r = await importOnce(options.file);
    imports.push(r.ms);
    rss.push(r.rss);
  }
  const largeRuns = Math.min(2, options.runs);
  const largeRss: number[] = [];
  for (let i = 0; i < largeRuns; i++) largeRss.push((await importOnce(options.largeFile)).rss);
  return {
    importMs: median(imports),
    sha256sumMs: median(sha),
    runs: options.runs,
    peakRssBytes: median(rss),
    largePeakRssBytes: median(largeRss),
    largeRuns,
  };
}
