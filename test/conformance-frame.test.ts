// The conformance suite's frame, held to what a reviewer relies on: every requirement of ABI.md
// is cited by a check and every cited id exists (the suite fails otherwise); a check whose
// expectation does not hold fails, and so does one after which the host no longer serves; the
// selectors and the command line refuse what they do not know. The checks themselves run in
// test/conformance-report.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CATEGORIES, ENGINES, expect as holds, type Check } from '../conformance/check.js';
import { CHECKS } from '../conformance/checks/index.js';
import { coverageOf, readRequirements } from '../conformance/coverage.js';
import { echoModule } from '../conformance/kit/guest-wat.js';
import { runSuite, selectChecks, UnknownSelector } from '../conformance/suite.js';
import { packageRoot } from '../host/1-base/paths.js';
import { runCli } from './helpers/cli-process.js';
import { tempDir } from './helpers/toolpack.js';

const tmp = tempDir('helix-conformance-frame-');
afterAll(() => tmp.cleanup());

describe('the suite against ABI.md', () => {
  it('cites every requirement ABI.md defines, and only those', () => {
    const coverage = coverageOf(CHECKS);
    expect(coverage.requirements).toBeGreaterThan(200);
    expect(coverage.uncovered).toEqual([]);
    expect(coverage.unknown).toEqual([]);
  });

  it('has at least 80 checks with unique ids, each naming its category, requirements and engines', () => {
    expect(CHECKS.length).toBeGreaterThanOrEqual(80);
    expect(new Set(CHECKS.map((c) => c.id)).size).toBe(CHECKS.length);
    for (const c of CHECKS) {
      expect(c.id.startsWith(`${c.category}.`), c.id).toBe(true);
      expect(CATEGORIES).toContain(c.category);
      expect(c.abi.length, c.id).toBeGreaterThan(0);
      expect(c.engines.length, c.id).toBeGreaterThan(0);
      for (const e of c.engines) expect(ENGINES).toContain(e);
      expect(c.expected.length, c.id).toBeGreaterThan(10);
    }
  });

  it('the threat model names only checks that exist, and a check for every promise', () => {
    const model = readFileSync(path.join(packageRoot(), 'conformance', 'THREAT-MODEL.md'), 'utf8');
    const ids = new Set(CHECKS.map((c) => c.id));
    const promises = model.split('\n').filter((line) => /^\| T\d+ \|/.test(line));
    expect(promises.length).toBeGreaterThan(10);
    const cited = promises.flatMap((row) =>
      [
        ...row
          .split('|')
          .at(-2)!
          .matchAll(/`([a-z]+\.[a-z0-9-]+)`/g),
      ].map((m) => m[1]!),
    );
    expect(cited.length).toBeGreaterThan(100);
    expect(cited.filter((id) => !ids.has(id))).toEqual([]);
    for (const row of promises.slice(0, -1)) expect(/`[a-z]+\.[a-z0-9-]+`/.test(row), row.slice(0, 60)).toBe(true);
  });

  it('finds a requirement no check cites, and an id a check cites that ABI.md lacks', () => {
    const abi = path.join(tmp.dir, 'ABI.md');
    writeFileSync(
      abi,
      '# ABI\n## Loading\n- **ABI-LOAD-001** The host MUST check.\n- **ABI-NEW-001** A new promise MUST hold.\n  It goes on.\n',
    );
    const requirements = readRequirements(abi);
    expect(requirements.map((r) => r.id)).toEqual(['ABI-LOAD-001', 'ABI-NEW-001']);
    expect(requirements[1]).toMatchObject({ section: 'Loading', summary: 'A new promise MUST hold.' });
    const coverage = coverageOf([fakeCheck('module.a', ['ABI-LOAD-001', 'ABI-GONE-009'])], requirements);
    expect(coverage.uncovered).toEqual(['ABI-NEW-001']);
    expect(coverage.unknown).toEqual(['module.a: ABI-GONE-009']);
  });
});

describe('verdicts', () => {
  it('fails a check whose expectation does not hold, and the report with it; passes one that holds', async () => {
    const report = await runSuite({
      checks: [
        fakeCheck('io.holds', ['ABI-LOAD-001'], async (ctx) => {
          const r = await ctx.call('frame.echo', { a: 1 });
          holds(r.status === 'success', 'echo failed');
        }),
        fakeCheck('io.does-not-hold', ['ABI-LOAD-001'], async (ctx) => {
          const r = await ctx.call('frame.echo', { a: 2 });
          holds(r.status === 'terminal_error', `expected terminal_error, got ${r.status}`);
        }),
      ],
      engines: ['helix'],
    });
    expect(report.results.map((r) => [r.id, r.verdict])).toEqual([
      ['io.holds', 'pass'],
      ['io.does-not-hold', 'fail'],
    ]);
    expect(report.results[1]!.failure).toBe('expected terminal_error, got success');
    expect(report.results[0]!.evidence.calls).toMatchObject([{ tool: 'frame.echo', status: 'success' }]);
    expect(report.results[0]!.evidence.survival).toMatchObject({ ok: true });
    expect(report.summary).toMatchObject({ total: 2, passed: 1, failed: 1 });
    expect(report.ok).toBe(false);
  });

  it('fails a check after which the host no longer serves, though its own expectation held', async () => {
    const report = await runSuite({
      checks: [
        fakeCheck('io.breaks-host', ['ABI-LOAD-001'], async (ctx) => {
          await (await ctx.host()).close();
        }),
      ],
      engines: ['helix'],
    });
    expect(report.results[0]!.verdict).toBe('fail');
    expect(report.results[0]!.evidence.survival.ok).toBe(false);
    expect(report.results[0]!.failure).toMatch(/^the host did not survive: /);
  });
});

describe('selecting', () => {
  it('selects by check id, category or ABI id, and refuses a selector that matches nothing', () => {
    const some = [fakeCheck('cpu.x', ['ABI-FUEL-001']), fakeCheck('module.y', ['ABI-LOAD-001', 'ABI-FUEL-001'])];
    expect(selectChecks(some, ['cpu.x']).map((c) => c.id)).toEqual(['cpu.x']);
    expect(selectChecks(some, ['module']).map((c) => c.id)).toEqual(['module.y']);
    expect(selectChecks(some, ['ABI-FUEL-001']).map((c) => c.id)).toEqual(['cpu.x', 'module.y']);
    expect(() => selectChecks(some, ['cpu.x', 'nope'])).toThrow(UnknownSelector);
  });

  it('helix conformance refuses an unknown engine or selector with exit 2 and says what exists', async () => {
    const engine = await runCli(['conformance', '--engine', 'wasmtime']);
    expect(engine.code).toBe(2);
    expect(engine.stderr).toContain('--engine wasmtime: unknown engine; the engines are helix, extism, container');
    const only = await runCli(['conformance', '--only', 'no.such-check']);
    expect(only.code).toBe(2);
    expect(only.stderr).toContain('--only no.such-check: no check has this id, category or ABI id');
  });
});

function fakeCheck(id: string, abi: string[], run: Check['run'] = async () => undefined): Check {
  return {
    id,
    title: id,
    category: id.split('.')[0] as Check['category'],
    abi,
    engines: ['helix'],
    expected: 'what the test says',
    packs: () => [{ id: 'frame.echo', module: echoModule() }],
    run,
  };
}
