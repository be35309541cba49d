// `helix test [DIR]`: loads the toolpack(s) in DIR through the real, fail-closed loader, runs
// every fixture through a real host over a throwaway store (or --home), prints one line per
// fixture and a summary. Exit 0 when every fixture passed, 1 when one failed or a pack has
// none, 3 when the host refuses to start (as every command that loads toolpacks).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { staleBuild } from '../build/source-stamp.js';
import { fixtureFiles, runFixture, type FixtureResult } from '../fixtures/run-fixtures.js';
import { createHost, type Host } from '../host.js';
import type { WasmTool } from '../tools/wasm-tool.js';
import { displayPath } from './build-command.js';
import { EXIT, printError, printJson } from './output.js';

/** Options of `helix test`. */
export interface TestOptions {
  readonly policy?: string;
  readonly home?: string;
  readonly json?: boolean;
}

/** One toolpack's outcome. */
export interface ToolpackTestResult {
  readonly tool: string;
  readonly version: string;
  readonly manifest: string;
  readonly fixtures: FixtureResult[];
  /** Why the pack failed before any fixture ran (no fixtures, an unreadable folder). */
  readonly problem?: string;
}

/** Runs `helix test`. */
export async function testCommand(dir = '.', opts: TestOptions = {}): Promise<void> {
  const home = opts.home ?? mkdtempSync(path.join(tmpdir(), 'helix-test-'));
  let host: Host | undefined;
  try {
    try {
      host = await createHost({ pluginsDir: dir, policyFile: opts.policy, home });
    } catch (err) {
      printError(err);
      process.exitCode = EXIT.startup;
      return;
    }
    const packs: ToolpackTestResult[] = [];
    for (const tool of host.tools().filter((t): t is WasmTool => t.kind === 'wasm')) {
      const pack = await testToolpack(host, tool, opts.json ? undefined : printFixture);
      if (!opts.json && pack.problem !== undefined) process.stdout.write(`FAIL  ${pack.tool}: ${pack.problem}\n`);
      packs.push(pack);
    }
    const results = packs.flatMap((p) => p.fixtures);
    const failed = results.filter((r) => !r.ok).length + packs.filter((p) => p.problem !== undefined).length;
    const ok = failed === 0;
    if (opts.json) {
      printJson({ ok, passed: results.filter((r) => r.ok).length, failed, toolpacks: packs });
    } else {
      const summary = `${results.filter((r) => r.ok).length} passed, ${failed} failed (${results.length} fixtures, ${packs.length} toolpack${packs.length === 1 ? '' : 's'})`;
      process.stdout.write(`${summary}\n`);
    }
    process.exitCode = ok ? EXIT.ok : EXIT.failed;
  } catch (err) {
    printError(err);
    process.exitCode = EXIT.failed;
  } finally {
    await host?.close();
    if (opts.home === undefined) rmSync(home, { recursive: true, force: true });
  }
}

/** Runs one toolpack's fixtures, reporting each as it finishes. */
export async function testToolpack(host: Host, tool: WasmTool, report?: (r: FixtureResult) => void): Promise<ToolpackTestResult> {
  const base = { tool: tool.id, version: tool.version, manifest: displayPath(tool.loaded.manifestPath) };
  // Fixtures passing on a module built from older sources would be a false green.
  const stale = staleBuild(tool.loaded);
  if (stale !== undefined) return { ...base, fixtures: [], problem: stale };
  let files: string[];
  try {
    files = fixtureFiles(tool);
  } catch (err) {
    return { ...base, fixtures: [], problem: `cannot read the fixtures folder: ${(err as Error).message}` };
  }
  if (files.length === 0) {
    const problem = tool.loaded.manifest.health === undefined ? 'no fixtures: set health.fixtures in the manifest to a folder of *.json fixtures' : `no *.json fixtures in ${tool.loaded.manifest.health.fixtures}/`;
    return { ...base, fixtures: [], problem };
  }
  const fixtures: FixtureResult[] = [];
  for (const file of files) {
    const result = await runFixture(host, tool, file);
    report?.(result);
    fixtures.push(result);
  }
  return { ...base, fixtures };
}

function printFixture(r: FixtureResult): void {
  const fuel = r.fuel_used === undefined ? '' : ` (fuel ${r.fuel_used})`;
  process.stdout.write(r.ok ? `ok    ${r.tool} ${r.fixture}${fuel}\n` : `FAIL  ${r.tool} ${r.fixture}: ${r.problem}${fuel}\n`);
}
