// The benchmark's result rows: each figure beside its baseline, the ratio, the target and
// whether it was met; the table `npm run bench` prints and the bench/results.json it writes.
import { cpus, loadavg, totalmem } from 'node:os';
import { writeFileSync } from 'node:fs';

/** A target on a row's ratio (figure / baseline) or on its figure alone. */
export interface Target {
  readonly of: 'ratio' | 'figure';
  readonly op: '<=' | '>=';
  readonly value: number;
}

/** One measured row. `figure` is null only when the measurement failed (`error` says why). */
export interface Row {
  /** Stable key, e.g. `seq.stats.tool.200M`. */
  readonly id: string;
  readonly name: string;
  readonly unit: string;
  readonly figure: number | null;
  readonly baseline: { readonly name: string; readonly figure: number | null } | null;
  /** figure / baseline figure. */
  readonly ratio: number | null;
  readonly target: Target | null;
  /** Whether the target was met; null without a target. */
  readonly met: boolean | null;
  /** How many measurements the figure is the median of. */
  readonly samples: number;
  readonly error?: string;
  readonly note?: string;
}

/** What a row is made from; ratio and met are computed. */
export interface RowSpec {
  readonly id: string;
  readonly name: string;
  readonly unit: string;
  readonly figure: number | null;
  readonly baseline?: { readonly name: string; readonly figure: number | null };
  readonly target?: Target;
  readonly samples: number;
  readonly error?: string;
  readonly note?: string;
}

const finite = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);

/** A row with its ratio and verdict. */
export function makeRow(spec: RowSpec): Row {
  const base = spec.baseline?.figure;
  const ratio = finite(spec.figure) && finite(base) && base !== 0 ? spec.figure / base : null;
  let met: boolean | null = null;
  if (spec.target !== undefined) {
    const value = spec.target.of === 'ratio' ? ratio : spec.figure;
    met = finite(value) ? (spec.target.op === '<=' ? value <= spec.target.value : value >= spec.target.value) : false;
  }
  return {
    id: spec.id,
    name: spec.name,
    unit: spec.unit,
    figure: finite(spec.figure) ? spec.figure : null,
    baseline: spec.baseline === undefined ? null : { name: spec.baseline.name, figure: finite(base) ? base : null },
    ratio,
    target: spec.target ?? null,
    met,
    samples: spec.samples,
    ...(spec.error === undefined ? {} : { error: spec.error }),
    ...(spec.note === undefined ? {} : { note: spec.note }),
  };
}

/** A row for a measurement that threw: no figure, the target (if any) missed, the error kept. */
export function failedRow(spec: Omit<RowSpec, 'figure' | 'samples' | 'error'>, error: unknown): Row {
  const message = error instanceof Error ? error.message : String(error);
  return makeRow({ ...spec, figure: null, samples: 0, error: message.split('\n')[0]!.slice(0, 300) });
}

function num(x: number | null, unit = ''): string {
  if (x === null) return '-';
  const digits = Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
  return `${x.toFixed(digits)}${unit === '' ? '' : ` ${unit}`}`;
}

function targetText(t: Target | null, unit: string): string {
  if (t === null) return '-';
  return t.of === 'ratio' ? `${t.op} ${t.value}x` : `${t.op} ${t.value} ${unit}`;
}

/** The rows as a Markdown table: row, figure, baseline, ratio, target, met. */
export function formatTable(rows: readonly Row[]): string[] {
  const lines = ['| row | figure | baseline | ratio | target | met |', '| --- | --- | --- | --- | --- | --- |'];
  for (const r of rows) {
    const figure = r.error === undefined ? num(r.figure, r.unit) : `failed: ${r.error.replace(/\|/g, '/')}`;
    const baseline = r.baseline === null ? '-' : `${r.baseline.name}: ${num(r.baseline.figure, r.unit)}`;
    const met = r.met === null ? '-' : r.met ? 'met' : 'missed';
    lines.push(
      `| ${r.name} | ${figure} | ${baseline} | ${r.ratio === null ? '-' : `${num(r.ratio)}x`} | ${targetText(r.target, r.unit)} | ${met} |`,
    );
  }
  return lines;
}

/** The machine a run was measured on. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memory_bytes: number;
  readonly node: string;
  readonly platform: string;
  readonly date: string;
}

/** This machine, now. */
export function thisMachine(): Machine {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memory_bytes: totalmem(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
  };
}

/** What bench/results.json holds. */
export interface Results {
  readonly mode: 'quick' | 'full' | 'big';
  /** The machine's 1, 5 and 15 minute load averages as the run began and as it ended: other jobs' share of the CPUs. */
  readonly load_average: { readonly start: readonly number[]; readonly end: readonly number[] };
  /** The sections run when --only chose some, else null (all of the mode's). */
  readonly only: readonly string[] | null;
  readonly machine: Machine;
  readonly rows: readonly Row[];
}

/** The 1, 5 and 15 minute load averages now, to two decimals. */
export function loadAverage(): number[] {
  return loadavg().map((x) => Math.round(x * 100) / 100);
}

/** Writes the results as indented JSON. */
export function writeResults(file: string, results: Results): void {
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}
