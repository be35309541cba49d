// The report of a conformance run, as data: what ran where, the verdicts, the counts a reviewer
// reads first, and the coverage of abi/ABI.md by the whole suite (not only what ran). The JSON
// file is this object; the HTML page (report-html.ts) renders the same object.
import { arch, cpus, platform, release, totalmem } from 'node:os';
import type { Category, Engine } from './check.js';
import type { Coverage } from './coverage.js';
import type { CheckResult } from './runner.js';

/** Counts of verdicts. */
export interface Counts {
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
}

/** A conformance run. */
export interface Report {
  readonly format: 'helix-conformance/1';
  readonly helixVersion: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: {
    readonly node: string;
    readonly platform: string;
    readonly arch: string;
    readonly cpus: number;
    readonly memoryBytes: number;
  };
  /** What was asked: the engines and the --only selectors. */
  readonly selection: { readonly engines: readonly Engine[]; readonly only: readonly string[] };
  /** Distinct checks in the suite and how many were selected. */
  readonly checks: { readonly inSuite: number; readonly selected: number };
  readonly summary: Counts & {
    readonly byEngine: Readonly<Partial<Record<Engine, Counts>>>;
    readonly byCategory: Readonly<Partial<Record<Category, Counts>>>;
  };
  readonly coverage: Coverage;
  /** True when every result passed and every requirement has a check. */
  readonly ok: boolean;
  readonly results: readonly CheckResult[];
}

/** Builds the report. */
export function buildReport(args: {
  helixVersion: string;
  startedAt: Date;
  durationMs: number;
  engines: readonly Engine[];
  only: readonly string[];
  inSuite: number;
  selected: number;
  coverage: Coverage;
  results: readonly CheckResult[];
}): Report {
  const count = (rs: readonly CheckResult[]): Counts => ({
    total: rs.length,
    passed: rs.filter((r) => r.verdict === 'pass').length,
    failed: rs.filter((r) => r.verdict === 'fail').length,
  });
  const group = <K extends string>(key: (r: CheckResult) => K): Partial<Record<K, Counts>> => {
    const out: Partial<Record<K, Counts>> = {};
    for (const k of new Set(args.results.map(key))) out[k] = count(args.results.filter((r) => key(r) === k));
    return out;
  };
  const summary = { ...count(args.results), byEngine: group((r) => r.engine), byCategory: group((r) => r.category) };
  return {
    format: 'helix-conformance/1',
    helixVersion: args.helixVersion,
    startedAt: args.startedAt.toISOString(),
    durationMs: Math.round(args.durationMs),
    machine: { node: process.version, platform: `${platform()} ${release()}`, arch: arch(), cpus: cpus().length, memoryBytes: totalmem() },
    selection: { engines: args.engines, only: args.only },
    checks: { inSuite: args.inSuite, selected: args.selected },
    summary,
    coverage: args.coverage,
    ok: summary.failed === 0 && args.coverage.uncovered.length === 0 && args.coverage.unknown.length === 0 && summary.total > 0,
    results: args.results,
  };
}
