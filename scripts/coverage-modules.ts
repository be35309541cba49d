// The modules whose line and branch coverage `npm test` holds to a floor (README, "Tests and CI"):
// the rooms of ARCHITECTURE.md's floors, each with the floors measured on a full run.

/** Line and branch coverage, in percent. */
export interface CoverageFigures {
  readonly lines: number;
  readonly branches: number;
}

/** A module: its name in the README's table, the TypeScript sources it counts, and its floor. */
export interface CoverageModule {
  readonly name: string;
  /** A glob relative to the repository root, as vitest's per-glob thresholds take it. */
  readonly glob: string;
  readonly floor: CoverageFigures;
}

/**
 * The modules, bottom floor first (test/architecture.test.ts, FLOORS). Each floor is what a full
 * `npm test` measured, less a slack (floorFor): a run may miss a few more lines or branches than
 * that one did (a path taken only when a timer or a retry fires) and still pass, while a module
 * that loses a test of its own falls below. `npm run coverage:table` prints the measured figures
 * and the floors they give; a floor is lowered to what a later full run gives when code whose
 * tests run in child processes (which V8 does not count here) grows a module, as `cli` did.
 */
export const COVERAGE_MODULES: readonly CoverageModule[] = [
  { name: 'abi', glob: 'abi/**/*.ts', floor: { lines: 98, branches: 96 } },
  { name: 'capabilities', glob: 'capabilities/**/*.ts', floor: { lines: 96, branches: 89 } },
  { name: 'host/1-base', glob: 'host/1-base/**/*.ts', floor: { lines: 92, branches: 89 } },
  { name: 'host/2-sandbox/wasm', glob: 'host/2-sandbox/wasm/**/*.ts', floor: { lines: 96, branches: 89 } },
  { name: 'host/2-sandbox/modules', glob: 'host/2-sandbox/modules/**/*.ts', floor: { lines: 94, branches: 88 } },
  { name: 'host/2-sandbox/engine', glob: 'host/2-sandbox/engine/**/*.ts', floor: { lines: 38, branches: 93 } },
  { name: 'host/3-store', glob: 'host/3-store/**/*.ts', floor: { lines: 90, branches: 83 } },
  { name: 'host/4-calls/policy', glob: 'host/4-calls/policy/**/*.ts', floor: { lines: 98, branches: 95 } },
  { name: 'host/4-calls/loader', glob: 'host/4-calls/loader/**/*.ts', floor: { lines: 92, branches: 86 } },
  { name: 'host/4-calls/artifacts', glob: 'host/4-calls/artifacts/**/*.ts', floor: { lines: 92, branches: 89 } },
  { name: 'host/4-calls/broker', glob: 'host/4-calls/broker/**/*.ts', floor: { lines: 94, branches: 91 } },
  { name: 'host/4-calls/runs', glob: 'host/4-calls/runs/**/*.ts', floor: { lines: 91, branches: 82 } },
  { name: 'host/4-calls/provenance', glob: 'host/4-calls/provenance/**/*.ts', floor: { lines: 93, branches: 78 } },
  { name: 'host/4-calls/tools', glob: 'host/4-calls/tools/**/*.ts', floor: { lines: 95, branches: 86 } },
  { name: 'host/4-calls/jobs', glob: 'host/4-calls/jobs/**/*.ts', floor: { lines: 77, branches: 72 } },
  { name: 'host/4-calls (registry.ts, call.ts)', glob: 'host/4-calls/*.ts', floor: { lines: 97, branches: 90 } },
  { name: 'host/5-host', glob: 'host/5-host/**/*.ts', floor: { lines: 78, branches: 84 } },
  { name: 'host/6-faces/mcp', glob: 'host/6-faces/mcp/**/*.ts', floor: { lines: 95, branches: 85 } },
  { name: 'host/6-faces/devloop', glob: 'host/6-faces/devloop/**/*.ts', floor: { lines: 64, branches: 71 } },
  { name: 'host/6-faces/toolchain', glob: 'host/6-faces/toolchain/**/*.ts', floor: { lines: 91, branches: 81 } },
  { name: 'host/6-faces/fanout', glob: 'host/6-faces/fanout/**/*.ts', floor: { lines: 34, branches: 52 } },
  { name: 'host/index.ts', glob: 'host/index.ts', floor: { lines: 40, branches: 100 } },
  { name: 'conformance', glob: 'conformance/**/*.ts', floor: { lines: 35, branches: 88 } },
  { name: 'cli', glob: 'cli/**/*.ts', floor: { lines: 1, branches: 61 } },
];

/** Whether `file` (relative to the repository root, `/`-separated) is one of the sources `glob` counts. */
export function inModule(file: string, glob: string): boolean {
  if (!glob.includes('*')) return file === glob;
  if (glob.endsWith('/**/*.ts')) return file.startsWith(glob.slice(0, -'**/*.ts'.length)) && file.endsWith('.ts');
  if (glob.endsWith('/*.ts')) {
    const dir = glob.slice(0, -'*.ts'.length);
    return file.startsWith(dir) && file.endsWith('.ts') && !file.slice(dir.length).includes('/');
  }
  throw new Error(`coverage module glob ${glob} is neither a file, DIR/**/*.ts nor DIR/*.ts`);
}

/** The floors as vitest's per-glob coverage thresholds. */
export function coverageThresholds(): Record<string, { lines: number; branches: number }> {
  return Object.fromEntries(COVERAGE_MODULES.map((m) => [m.glob, { lines: m.floor.lines, branches: m.floor.branches }]));
}

/** Covered and total lines, or branches, of a module in one run. */
export interface Count {
  readonly total: number;
  readonly covered: number;
}

/**
 * The floor a measured count gives: the percentage left if the run had missed a slack more of
 * them (three, or 1% of the module's total when that is more), rounded down to an integer, never
 * negative. Three covers a path taken in one run and not the next (a timer, a retry, a race
 * lost); 1% keeps a large module from failing on a handful of lines.
 */
export function floorFor(c: Count): number {
  if (c.total === 0) return 100;
  const slack = Math.max(3, Math.ceil(c.total / 100));
  return Math.max(0, Math.floor((100 * (c.covered - slack)) / c.total));
}
