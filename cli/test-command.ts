// `helix test [DIR]`: loads the toolpack(s) in DIR through the real, fail-closed loader and runs
// their fixtures through a real host, each chain of fixtures on a fresh store (run-suite.ts),
// printing one line per fixture (its fuel, or the run it replayed) and a summary. Exit 0 when
// every fixture passed, 1 when one failed or a pack has none, 2 when --only names no fixture,
// 3 when the host refuses to start (as every command that loads toolpacks).
import { MIB } from '../abi/index.js';
import { staleBuild } from '../host/6-faces/toolchain/source-stamp.js';
import { asFixtureName } from '../host/6-faces/devloop/fixture-plan.js';
import { openFixtureSuite, type FixtureSuite } from '../host/6-faces/devloop/run-suite.js';
import type { FixtureResult } from '../host/6-faces/devloop/run-fixtures.js';
import { displayPath } from './build-command.js';
import { EXIT, printError, printJson } from './output.js';

/** Options of `helix test`. */
export interface TestOptions {
  readonly policy?: string;
  readonly home?: string;
  readonly json?: boolean;
  /** Fixture names (with or without `.json`; each may be a comma list) to run, with what they continue. */
  readonly only?: readonly string[];
}

/** One toolpack's outcome. */
export interface ToolpackTestResult {
  readonly tool: string;
  readonly version: string;
  readonly manifest: string;
  readonly fixtures: FixtureResult[];
  /** Why the pack failed before any fixture ran (no fixtures, an unreadable folder, a stale build). */
  readonly problem?: string;
}

/** Runs `helix test` and sets the exit code. */
export async function testCommand(dir = '.', opts: TestOptions = {}): Promise<void> {
  process.exitCode = await runTests(dir, opts);
}

/** Runs the fixtures of the packs in `dir`, printing as `helix test` does; returns the exit code. */
export async function runTests(dir: string, opts: TestOptions = {}): Promise<number> {
  let suite: FixtureSuite;
  try {
    suite = await openFixtureSuite({
      toolpacksDir: dir,
      ...(opts.policy === undefined ? {} : { policyFile: opts.policy }),
      ...(opts.home === undefined ? {} : { keepUnder: opts.home }),
    });
  } catch (err) {
    printError(err);
    return EXIT.startup;
  }
  try {
    const only =
      opts.only === undefined
        ? undefined
        : new Set(
            opts.only
              .flatMap((o) => o.split(','))
              .map((o) => asFixtureName(o.trim()))
              .filter((o) => o !== ''),
          );
    const plans = suite.toolpacks.map((tool) => ({ tool, plan: suite.plan(tool, only) }));
    if (only !== undefined) {
      const known = new Set(plans.flatMap(({ plan }) => (plan.ok ? plan.names : [])));
      const unknown = [...only].filter((n) => !known.has(n));
      if (unknown.length > 0) {
        process.stderr.write(
          `helix: --only ${unknown.join(', ')}: no such fixture in ${displayPath(dir)}; the fixtures are: ${[...known].sort().join(', ') || '(none)'}\n`,
        );
        return EXIT.invalid;
      }
    }
    const packs: ToolpackTestResult[] = [];
    for (const { tool, plan } of plans) {
      const base = { tool: tool.manifest.id, version: tool.manifest.version, manifest: displayPath(tool.manifestPath) };
      // With --only, a pack none of whose fixtures was named is not tested, and not a failure.
      if (plan.ok && plan.chains.length === 0) continue;
      // Fixtures passing on a module built from older sources would be a false green.
      const stale = staleBuild(tool);
      if (stale !== undefined) {
        if (!opts.json) process.stdout.write(`FAIL  ${base.tool}: ${stale}\n`);
        packs.push({ ...base, fixtures: [], problem: stale });
        continue;
      }
      if (!plan.ok) {
        if (only !== undefined) continue;
        if (!opts.json) process.stdout.write(`FAIL  ${base.tool}: ${plan.problem}\n`);
        packs.push({ ...base, fixtures: [], problem: plan.problem });
        continue;
      }
      packs.push({ ...base, fixtures: await suite.run(tool, plan.chains, opts.json ? undefined : printFixture) });
    }
    const results = packs.flatMap((p) => p.fixtures);
    const failed = results.filter((r) => !r.ok).length + packs.filter((p) => p.problem !== undefined).length;
    const passed = results.filter((r) => r.ok).length;
    if (opts.json) printJson({ ok: failed === 0, passed, failed, toolpacks: packs });
    else
      process.stdout.write(
        `${passed} passed, ${failed} failed (${results.length} fixtures, ${packs.length} toolpack${packs.length === 1 ? '' : 's'})\n`,
      );
    return failed === 0 ? EXIT.ok : EXIT.failed;
  } catch (err) {
    printError(err);
    return EXIT.failed;
  } finally {
    await suite.close();
  }
}

/** The line of one fixture: ok or FAIL, what differed, and its fuel (per input MiB too, for a call on at least a MiB of artifacts) or the run it replayed. */
export function fixtureLine(r: FixtureResult): string {
  // Below a MiB the call's fixed cost would swamp the rate: the JSON result still has it.
  const perMiB = r.fuel_per_input_mib === undefined || (r.input_bytes ?? 0) < MIB ? '' : `, ${r.fuel_per_input_mib} per input MiB`;
  const cost = r.replayed === true ? ` (replayed ${r.run_id}, fuel 0)` : r.fuel_used === undefined ? '' : ` (fuel ${r.fuel_used}${perMiB})`;
  if (r.ok) return `ok    ${r.tool} ${r.fixture}${cost}`;
  // A problem may go on below its first line (the violations of a contract error): the cost ends the first.
  const [first, ...below] = (r.problem ?? '').split('\n');
  return [`FAIL  ${r.tool} ${r.fixture}: ${first}${cost}`, ...below].join('\n');
}

function printFixture(r: FixtureResult): void {
  process.stdout.write(`${fixtureLine(r)}\n`);
}
