// The test tiers and the coverage modules cover the repository exactly once (README, "Tests and
// CI"): every test file is in one vitest project, fast or slow, never both and never neither, as
// vitest itself lists them; every TypeScript source of the floors is counted by one coverage module.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COVERAGE_MODULES, floorFor, inModule } from '../scripts/coverage-modules.js';
import { SLOW } from '../vitest.config.js';
import { sourceFiles } from './helpers/import-graph.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** Every `*.test.ts` in the working tree, wherever it is, except installed and built copies. */
function testFilesOnDisk(rel = ''): string[] {
  const skip = new Set(['node_modules', 'dist', '.git', 'coverage', 'ci-artifacts']);
  return readdirSync(path.join(ROOT, rel), { withFileTypes: true }).flatMap((e) => {
    const child = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) return skip.has(e.name) ? [] : testFilesOnDisk(child);
    return e.isFile() && e.name.endsWith('.test.ts') ? [child] : [];
  });
}

/** The files of each project, as `vitest list` reads them from vitest.config.ts (no test is collected). */
async function filesByProject(): Promise<Map<string, string[]>> {
  // A clean environment: the variables of the vitest running this test would make the child a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS'));
  const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const { stdout } = await run(process.execPath, [vitest, 'list', '--filesOnly', '--json'], { cwd: ROOT, env, maxBuffer: 1 << 24 });
  const byProject = new Map<string, string[]>();
  for (const { file, projectName } of JSON.parse(stdout) as { file: string; projectName: string }[]) {
    byProject.set(projectName, [...(byProject.get(projectName) ?? []), path.relative(ROOT, file).split(path.sep).join('/')]);
  }
  return byProject;
}

describe('the test tiers', () => {
  it('put every test file in exactly one of the projects fast and slow', async () => {
    const byProject = await filesByProject();
    expect([...byProject.keys()].sort()).toEqual(['fast', 'slow']);
    const tiersOf = new Map<string, string[]>();
    for (const [project, files] of byProject) for (const f of files) tiersOf.set(f, [...(tiersOf.get(f) ?? []), project]);
    const onDisk = testFilesOnDisk().sort();
    const inNeither = onDisk.filter((f) => !tiersOf.has(f));
    const inBoth = [...tiersOf].filter(([, tiers]) => tiers.length > 1).map(([f]) => f);
    expect(inNeither, 'test files no project runs: widen TEST_FILES in vitest.config.ts or move them').toEqual([]);
    expect(inBoth, 'test files in both tiers').toEqual([]);
    expect([...tiersOf.keys()].sort()).toEqual(onDisk);
    // A file named in the slow list that no longer exists was moved or renamed: its new name must be placed again.
    const slow = byProject.get('slow') ?? [];
    expect(SLOW.filter((entry) => !entry.includes('*') && !slow.includes(entry))).toEqual([]);
  }, 60_000);
});

describe('the coverage modules', () => {
  it('count every TypeScript source of the floors in exactly one module, and none is empty', () => {
    const sources = sourceFiles(ROOT, ['abi', 'capabilities', 'host', 'conformance', 'cli']);
    const modulesOf = (f: string) => COVERAGE_MODULES.filter((m) => inModule(f, m.glob)).map((m) => m.name);
    expect(sources.filter((f) => modulesOf(f).length !== 1).map((f) => `${f}: ${modulesOf(f).join(', ') || 'none'}`)).toEqual([]);
    expect(COVERAGE_MODULES.filter((m) => !sources.some((f) => inModule(f, m.glob))).map((m) => m.name)).toEqual([]);
  });
});

describe('floorFor', () => {
  it('leaves room for three lines or branches, or 1% of a large module, and rounds down', () => {
    expect(floorFor({ total: 0, covered: 0 })).toBe(100);
    expect(floorFor({ total: 21, covered: 14 })).toBe(52); // 11/21 = 52.4
    expect(floorFor({ total: 100, covered: 100 })).toBe(97);
    expect(floorFor({ total: 1000, covered: 900 })).toBe(89); // slack 10: 890/1000
    expect(floorFor({ total: 1001, covered: 900 })).toBe(88); // slack 11: 889/1001 = 88.8
    expect(floorFor({ total: 5, covered: 2 })).toBe(0);
  });
});
