// The sequence-tool rows: `seq.stats` and `fastq.filter` (and, on the 4 GB file, `seq.kmer_count`)
// called through the real CLI after `helix artifact import`, each on a fresh store warmed by one
// other call, alternated with seqkit on the same file: the time inside the tool (`duration_ms`)
// and the whole process.
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { timeHelix, timeProcess } from './processes.js';
import { failedRow, makeRow, type Row, type Target } from './rows.js';
import { median } from './stats.js';

/** Which file the rows are measured on and how. */
export interface SequenceOptions {
  /** A FASTQ in the directory used as the import root. */
  readonly file: string;
  /** The file's size in words, for the row names: `200 MiB`. */
  readonly label: string;
  readonly repeats: number;
  /** Prefix of the row ids (`big.` for the 4 GB rows). */
  readonly idPrefix: string;
  /** Also seq.kmer_count, and only rows inside the tool (the 4 GB rows). */
  readonly big: boolean;
}

/** Samples of one measured series; the first failure ends it and is kept. */
class Series {
  readonly samples: number[] = [];
  error: unknown;

  async take(measure: () => Promise<number>): Promise<void> {
    if (this.error !== undefined) return;
    try {
      this.samples.push(await measure());
    } catch (e) {
      this.error = e;
    }
  }

  row(spec: { id: string; name: string; unit: string; baseline?: Series; baselineName?: string; target?: Target; note?: string }): Row {
    const baseline =
      spec.baseline === undefined
        ? undefined
        : { name: spec.baselineName!, figure: spec.baseline.samples.length > 0 ? median(spec.baseline.samples) : null };
    const error = this.error ?? spec.baseline?.error;
    const base = {
      id: spec.id,
      name: spec.name,
      unit: spec.unit,
      ...(baseline && { baseline }),
      ...(spec.target && { target: spec.target }),
      ...(spec.note && { note: spec.note }),
    };
    if (error !== undefined) return failedRow(base, error);
    return makeRow({ ...base, figure: median(this.samples), samples: this.samples.length });
  }
}

interface Envelope {
  status: string;
  output?: Record<string, unknown>;
  error?: { code: string; message: string };
  metrics?: { duration_ms: number };
}

/** One `helix call`: wall ms, the tool's duration_ms and its output; a failed call throws its error code and message. */
async function call(
  tool: string,
  input: unknown,
  home: string,
  cwd: string,
): Promise<{ ms: number; toolMs: number; output: Record<string, unknown> }> {
  const t = await timeHelix(['call', tool, '--home', home, '--compact', '--input', JSON.stringify(input)], {
    cwd,
    captureStdout: true,
    okCodes: [0, 1],
  });
  const envelope = JSON.parse(t.stdout) as Envelope;
  if (envelope.status !== 'success' || envelope.metrics === undefined)
    throw new Error(`${tool}: ${envelope.error?.code ?? envelope.status}: ${envelope.error?.message ?? ''}`);
  return { ms: t.ms, toolMs: envelope.metrics.duration_ms, output: envelope.output ?? {} };
}

/** Reads the record count off `seqkit stats` output (its second line, fourth column). */
function seqkitRecords(stdout: string): number {
  return Number(stdout.split('\n')[1]?.trim().split(/\s+/)[3]?.replace(/,/g, ''));
}

function mustEqual(what: string, helix: unknown, seqkit: unknown): void {
  if (helix !== seqkit)
    throw new Error(
      `${what}: Helix says ${String(helix)}, seqkit ${String(seqkit)}: the benchmark compares like with like only when they agree`,
    );
}

/** Measures the rows on `options.file`, each repetition on a fresh store beside it. */
export async function sequenceRows(options: SequenceOptions): Promise<Row[]> {
  const dir = path.dirname(options.file);
  const name = path.basename(options.file);
  const filtered = path.join(dir, 'seqkit-filtered.fq');
  const s = {
    seqkitStats: new Series(),
    statsTool: new Series(),
    statsCall: new Series(),
    seqkitFilter: new Series(),
    filterTool: new Series(),
    filterCall: new Series(),
    kmerTool: new Series(),
    kmerCall: new Series(),
  };
  // Unmeasured: the file into the page cache, as it is for every measured run after.
  await timeProcess('sha256sum', [options.file]);
  for (let i = 0; i < options.repeats; i++) {
    const home = mkdtempSync(path.join(dir, 'home-'));
    try {
      const imported = await timeHelix(['artifact', 'import', name, '--home', home], { cwd: dir, captureStdout: true });
      const id = (JSON.parse(imported.stdout) as { id: string }).id;
      // Unmeasured: a store in use, as a user's is after its first call (the load cache filled,
      // the module records written); the cold start has rows of its own.
      await timeHelix(['call', 'seq.gc_content', '--home', home, '--input', '{"sequence":"ACGT"}'], { cwd: dir, captureStdout: true });
      let records = Number.NaN;
      await s.seqkitStats.take(async () => {
        const t = await timeProcess('seqkit', ['stats', '-a', '-j', '1', name], { cwd: dir, captureStdout: true });
        records = seqkitRecords(t.stdout);
        return t.ms;
      });
      const stats = await call('seq.stats', { sequences: id }, home, dir).catch((e: unknown) => e as Error);
      await s.statsTool.take(async () => {
        if (stats instanceof Error) throw stats;
        mustEqual('seq.stats num_seqs', stats.output.num_seqs, records);
        return stats.toolMs;
      });
      await s.statsCall.take(async () => (stats instanceof Error ? Promise.reject(stats) : stats.ms));
      let kept = Number.NaN;
      await s.seqkitFilter.take(async () => {
        const t = await timeProcess('seqkit', ['seq', '-m', '120', '-Q', '16', name, '-o', filtered], { cwd: dir });
        kept = Number((await timeProcess('wc', ['-l', filtered], { captureStdout: true })).stdout.trim().split(/\s+/)[0]) / 4;
        rmSync(filtered, { force: true });
        return t.ms;
      });
      const filter = await call('fastq.filter', { reads: id, min_length: 120, min_mean_quality: 16 }, home, dir).catch(
        (e: unknown) => e as Error,
      );
      await s.filterTool.take(async () => {
        if (filter instanceof Error) throw filter;
        mustEqual('fastq.filter records_out', filter.output.records_out, kept);
        return filter.toolMs;
      });
      await s.filterCall.take(async () => (filter instanceof Error ? Promise.reject(filter) : filter.ms));
      if (options.big) {
        const kmer = await call('seq.kmer_count', { fasta: id, k: 8 }, home, dir).catch((e: unknown) => e as Error);
        await s.kmerTool.take(async () => (kmer instanceof Error ? Promise.reject(kmer) : kmer.toolMs));
        await s.kmerCall.take(async () => (kmer instanceof Error ? Promise.reject(kmer) : kmer.ms));
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  const p = options.idPrefix;
  const on = `on a generated ${options.label} FASTQ`;
  const stats = { baseline: s.seqkitStats, baselineName: 'seqkit stats -a -j 1' };
  const filter = { baseline: s.seqkitFilter, baselineName: 'seqkit seq -m 120 -Q 16' };
  const wholeNote = (x: Series) => (x.samples.length > 0 ? `whole call ${median(x.samples).toFixed(0)} ms` : undefined);
  const rows = [
    s.statsTool.row({
      id: `${p}seq.stats.tool`,
      name: `seq.stats ${on}, inside the tool`,
      unit: 'ms',
      ...stats,
      target: { of: 'ratio', op: '<=', value: 0.5 },
      ...(options.big && { note: wholeNote(s.statsCall) }),
    }),
    s.filterTool.row({
      id: `${p}fastq.filter.tool`,
      name: `fastq.filter -m 120 -Q 16 ${on}, inside the tool`,
      unit: 'ms',
      ...filter,
      target: { of: 'ratio', op: '<=', value: 1 },
      ...(options.big && { note: wholeNote(s.filterCall) }),
    }),
  ];
  if (options.big) {
    rows.push(
      s.kmerTool.row({
        id: `${p}seq.kmer_count.tool`,
        name: `seq.kmer_count k=8 ${on}, inside the tool (no seqkit peer)`,
        unit: 'ms',
        note: wholeNote(s.kmerCall),
      }),
    );
  } else {
    rows.splice(
      1,
      0,
      s.statsCall.row({
        id: `${p}seq.stats.call`,
        name: `seq.stats ${on}, whole helix call (process start to exit)`,
        unit: 'ms',
        ...stats,
        target: { of: 'ratio', op: '<=', value: 1 },
      }),
    );
    rows.push(
      s.filterCall.row({
        id: `${p}fastq.filter.call`,
        name: `fastq.filter -m 120 -Q 16 ${on}, whole helix call`,
        unit: 'ms',
        ...filter,
        target: { of: 'ratio', op: '<=', value: 1.5 },
      }),
    );
  }
  return rows;
}
