// `helix artifact import` of a generated FASTQ file against `sha256sum` of the same file, run
// alternately in one run, with the import's peak memory, so memory can be compared across sizes.
// `node dist/bench/import.js [MiB ...]` prints the figures; bench/run.ts calls measureImport.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../host/paths.js';
import { quantile } from './stats.js';

/** What measureImport measures; every field has a default. */
export interface ImportOptions {
  /** Size of the generated FASTQ file in MiB (default 200). */
  readonly mib?: number;
  /** Imports (each into a fresh home) and as many `sha256sum` runs, alternated (default 5). */
  readonly runs?: number;
  /** Where the file and homes are made (default the system's temporary directory); removed afterwards. */
  readonly tempRoot?: string;
}

/** Medians in seconds, their ratio, and the import's largest peak resident memory. */
export interface ImportFigures {
  readonly mib: number;
  readonly importSeconds: number;
  readonly sha256sumSeconds: number;
  /** importSeconds / sha256sumSeconds: the target is at most 1.3. */
  readonly ratio: number;
  readonly importPeakRssMiB: number;
}

const BASES = 'ACGT';

/** Writes a FASTQ file of about `mib` MiB, 150-base reads with distinct ids (so no chunk repeats). */
export function writeFastq(file: string, mib: number): void {
  const fd = openSync(file, 'w');
  try {
    const target = mib * 1024 * 1024;
    let written = 0;
    let n = 0;
    let seed = 12345;
    const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0);
    while (written < target) {
      const lines: string[] = [];
      for (let i = 0; i < 10_000; i++, n++) {
        let seq = '';
        let qual = '';
        for (let j = 0; j < 150; j++) {
          const r = next();
          seq += BASES[r & 3];
          qual += String.fromCharCode(35 + ((r >>> 8) % 40));
        }
        lines.push(`@read${n} bench\n${seq}\n+\n${qual}\n`);
      }
      const block = Buffer.from(lines.join(''));
      const piece = block.subarray(0, Math.min(block.length, target - written));
      writeSync(fd, piece);
      written += piece.length;
    }
  } finally {
    closeSync(fd);
  }
}

/** Runs a command under GNU time: wall seconds (measured here) and peak RSS in KiB. */
function timed(command: string, args: string[]): { seconds: number; rssKiB: number } {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'rss=%M', command, ...args], { encoding: 'utf8' });
  const seconds = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const rss = /rss=(\d+)/.exec(r.stderr ?? '');
  return { seconds, rssKiB: rss === null ? Number.NaN : Number(rss[1]) };
}

/**
 * Generates a FASTQ file and times, alternately, `sha256sum FILE` and the built CLI's
 * `helix artifact import FILE` into a fresh home (process start to exit, both). Needs
 * `/usr/bin/time` (GNU time) and a built dist/.
 */
export function measureImport(options: ImportOptions = {}): ImportFigures {
  const mib = options.mib ?? 200;
  const runs = options.runs ?? 5;
  if (!existsSync('/usr/bin/time')) throw new Error('measureImport needs GNU time at /usr/bin/time');
  const dir = mkdtempSync(path.join(options.tempRoot ?? tmpdir(), 'helix-bench-import-'));
  try {
    const file = path.join(dir, 'reads.fastq');
    writeFastq(file, mib);
    const policy = path.join(dir, 'policy.yaml');
    writeFileSync(policy, `version: 1\ntools: { allow: ["*"] }\npaths: { importRoots: [${JSON.stringify(dir)}] }\nceilings: { maxImportBytes: ${4 * mib * 1024 * 1024} }\n`);
    const cli = path.join(packageRoot(), 'dist', 'host', 'cli', 'main.js');
    const imports: number[] = [];
    const sums: number[] = [];
    let peak = 0;
    for (let i = 0; i < runs; i++) {
      sums.push(timed('sha256sum', [file]).seconds);
      const home = path.join(dir, `home-${i}`);
      const r = timed(process.execPath, [cli, 'artifact', 'import', file, '--home', home, '--policy', policy]);
      imports.push(r.seconds);
      peak = Math.max(peak, r.rssKiB);
      rmSync(home, { recursive: true, force: true });
    }
    const importSeconds = quantile(imports, 0.5);
    const sha256sumSeconds = quantile(sums, 0.5);
    return { mib, importSeconds, sha256sumSeconds, ratio: importSeconds / sha256sumSeconds, importPeakRssMiB: peak / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number);
  for (const mib of sizes.length > 0 ? sizes : [200]) {
    const f = measureImport({ mib, runs: Number(process.env.BENCH_IMPORT_RUNS ?? 5), ...(process.env.BENCH_IMPORT_TEMP === undefined ? {} : { tempRoot: process.env.BENCH_IMPORT_TEMP }) });
    process.stdout.write(`import ${f.mib} MiB: ${f.importSeconds.toFixed(3)} s, sha256sum ${f.sha256sumSeconds.toFixed(3)} s, ratio ${f.ratio.toFixed(2)}, import peak RSS ${f.importPeakRssMiB.toFixed(0)} MiB\n`);
  }
}
