// `helix conformance`: runs the conformance suite (conformance/) against this host, one line per
// check and engine on stderr, then a summary and the coverage of abi/ABI.md; writes the report
// as JSON and as a page for a browser when asked. Exit 0 when every check passed and every
// requirement has a check, 1 otherwise, 2 for bad usage (an unknown engine or selector).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ENGINES, type Engine } from '../conformance/check.js';
import { renderHtml } from '../conformance/report-html.js';
import type { CheckResult } from '../conformance/runner.js';
import type { Report } from '../conformance/report.js';
import { runSuite, UnknownSelector } from '../conformance/suite.js';
import { EXIT } from './output.js';

/** Options of `helix conformance`. */
export interface ConformanceOptions {
  readonly engine?: readonly string[];
  readonly only?: readonly string[];
  readonly json?: string;
  readonly html?: string;
}

/** Runs `helix conformance` and sets the exit code. */
export async function conformanceCommand(opts: ConformanceOptions = {}): Promise<void> {
  const engines = (opts.engine ?? [])
    .flatMap((e) => e.split(','))
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const bad = engines.filter((e) => !(ENGINES as readonly string[]).includes(e));
  if (bad.length > 0) {
    process.stderr.write(`helix: --engine ${bad.join(', ')}: unknown engine; the engines are ${ENGINES.join(', ')}\n`);
    process.exitCode = EXIT.invalid;
    return;
  }
  const only = (opts.only ?? [])
    .flatMap((o) => o.split(','))
    .map((o) => o.trim())
    .filter((o) => o !== '');
  let report: Report;
  try {
    report = await runSuite({ ...(engines.length === 0 ? {} : { engines: engines as Engine[] }), only, onResult: printLine });
  } catch (e) {
    if (!(e instanceof UnknownSelector)) throw e;
    process.stderr.write(`helix: ${e.message}; \`helix conformance --help\` says what selects a check\n`);
    process.exitCode = EXIT.invalid;
    return;
  }
  const { summary, coverage } = report;
  process.stderr.write(
    `\n${summary.passed} passed, ${summary.failed} failed, of ${summary.total} (${report.checks.selected} checks on ${report.selection.engines.join(', ')}) in ${(report.durationMs / 1000).toFixed(1)} s\n`,
  );
  process.stderr.write(`ABI.md: ${coverage.covered} of ${coverage.requirements} requirements have a check\n`);
  if (coverage.uncovered.length > 0) process.stderr.write(`  no check backs: ${coverage.uncovered.join(' ')}\n`);
  if (coverage.unknown.length > 0) process.stderr.write(`  checks cite ids ABI.md does not define: ${coverage.unknown.join('; ')}\n`);
  for (const [file, text] of [
    [opts.json, () => `${JSON.stringify(report, null, 2)}\n`],
    [opts.html, () => renderHtml(report)],
  ] as const) {
    if (file === undefined) continue;
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    writeFileSync(file, text());
    process.stderr.write(`report: ${file}\n`);
  }
  if (report.results.length === 0) process.stderr.write('helix: no check ran on the engines asked for\n');
  process.exitCode = report.ok ? EXIT.ok : EXIT.failed;
}

function printLine(r: CheckResult): void {
  const fuel = r.evidence.fuelUsed === null ? '' : `, fuel ${r.evidence.fuelUsed}`;
  process.stderr.write(
    `${r.verdict === 'pass' ? 'PASS' : 'FAIL'}  ${r.engine.padEnd(9)} ${r.id}  (${Math.round(r.evidence.durationMs)} ms${fuel})\n`,
  );
  if (r.failure !== undefined) process.stderr.write(`      ${r.failure.split('\n').join('\n      ')}\n`);
}
