// The suite as one call: select checks (by check id, category or ABI id), run them on the
// engines asked for, and build the report with the coverage of abi/ABI.md by the whole suite.
import { readFileSync } from 'node:fs';
import { packageRoot } from '../host/1-base/paths.js';
import { CATEGORIES, ENGINES, type Check, type Engine } from './check.js';
import { CHECKS } from './checks/index.js';
import { coverageOf } from './coverage.js';
import { buildReport, type Report } from './report.js';
import { runChecks, type CheckResult } from './runner.js';

/** Options of runSuite. */
export interface SuiteOptions {
  /** Engines to run on; default all three. */
  readonly engines?: readonly Engine[];
  /** Check ids, categories or ABI ids; default every check. */
  readonly only?: readonly string[];
  readonly onResult?: (result: CheckResult) => void;
  /** The checks (default the suite's); tests pass their own. */
  readonly checks?: readonly Check[];
}

/** A selector of --only that matched nothing. */
export class UnknownSelector extends Error {
  constructor(readonly selectors: readonly string[]) {
    super(`--only ${selectors.join(', ')}: no check has this id, category or ABI id`);
  }
}

/** The checks `only` selects (each selector a check id, a category or an ABI id); all when empty. */
export function selectChecks(checks: readonly Check[], only: readonly string[] = []): Check[] {
  if (only.length === 0) return [...checks];
  const unknown = only.filter((s) => !checks.some((c) => matches(c, s)));
  if (unknown.length > 0) throw new UnknownSelector(unknown);
  return checks.filter((c) => only.some((s) => matches(c, s)));
}

function matches(check: Check, selector: string): boolean {
  return check.id === selector || check.category === selector || check.abi.includes(selector);
}

/** Runs the selected checks and reports. */
export async function runSuite(options: SuiteOptions = {}): Promise<Report> {
  const checks = options.checks ?? CHECKS;
  const engines = options.engines ?? ENGINES;
  const selected = selectChecks(checks, options.only);
  const startedAt = new Date();
  const t0 = performance.now();
  const results = await runChecks(selected, { engines, ...(options.onResult === undefined ? {} : { onResult: options.onResult }) });
  return buildReport({
    helixVersion: (JSON.parse(readFileSync(`${packageRoot()}/package.json`, 'utf8')) as { version: string }).version,
    startedAt,
    durationMs: performance.now() - t0,
    engines,
    only: options.only ?? [],
    inSuite: checks.length,
    selected: selected.length,
    coverage: coverageOf(checks),
    results: [...results].sort((a, b) => CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category)),
  });
}
