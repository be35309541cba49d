// `helix conformance` on every engine, as CI runs it and a reviewer would: the real CLI in a
// child process, Docker and the Slurm cluster brought up first (scripts/services.sh), the JSON
// report read back, and the HTML report opened in Debian's headless Chromium: the page renders,
// the browser's own count of the result cards matches the JSON, and its screenshot is kept in
// ci-artifacts/ (the CI artifact a reviewer looks at first).
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../conformance/report.js';
import { packageRoot } from '../host/1-base/paths.js';
import { renderedDom, screenshot } from './helpers/chromium.js';
import { runCli } from './helpers/cli-process.js';
import { UP_BOUND_MS, upDocker } from './helpers/docker-services.js';
import { slurmUp } from './helpers/slurm-kit.js';
import { tempDir } from './helpers/toolpack.js';

const ARTIFACTS = path.join(packageRoot(), 'ci-artifacts');
/** The whole suite takes minutes on a loaded 2-core machine; the bound only stops a hang. */
const SUITE_BOUND_MS = 30 * 60_000;
const out = tempDir('helix-conformance-report-');
const json = path.join(out.dir, 'report.json');
const html = path.join(out.dir, 'report.html');
let run: Awaited<ReturnType<typeof runCli>>;
let report: Report;

beforeAll(
  async () => {
    await upDocker();
    await slurmUp();
    run = await runCli(['conformance', '--json', json, '--html', html], { killAfterMs: SUITE_BOUND_MS });
    report = JSON.parse(readFileSync(json, 'utf8')) as Report;
  },
  UP_BOUND_MS * 2 + SUITE_BOUND_MS,
);
afterAll(() => out.cleanup());

describe('helix conformance on every engine', () => {
  it('passes every check and exits 0', () => {
    const failed = report.results.filter((r) => r.verdict === 'fail').map((r) => `${r.engine} ${r.id}: ${r.failure}`);
    expect(failed).toEqual([]);
    expect(run.code, run.stderr.slice(-4000)).toBe(0);
    expect(report.ok).toBe(true);
  });

  it('runs at least 80 checks, on all three engines, each followed by a call the same host answered', () => {
    expect(report.checks.inSuite).toBeGreaterThanOrEqual(80);
    expect(new Set(report.results.map((r) => r.id)).size).toBe(report.checks.inSuite);
    expect(Object.keys(report.summary.byEngine).sort()).toEqual(['container', 'extism', 'helix']);
    expect(report.results.filter((r) => !r.evidence.survival.ok).map((r) => r.id)).toEqual([]);
  });

  it('backs every requirement of ABI.md with a check', () => {
    expect(report.coverage.uncovered).toEqual([]);
    expect(report.coverage.unknown).toEqual([]);
    expect(report.coverage.covered).toBe(report.coverage.requirements);
  });

  it('records evidence for each result: time, peak memory, the calls with their codes and fuel', () => {
    for (const r of report.results) {
      expect(r.evidence.durationMs, r.id).toBeGreaterThan(0);
      expect(Number.isFinite(r.evidence.peakRssDeltaBytes), r.id).toBe(true);
      for (const c of r.evidence.calls)
        expect(c.status === 'success' || typeof c.code === 'string', `${r.id}: ${JSON.stringify(c)}`).toBe(true);
    }
    // The hostile modules are in the report, as a reviewer reads them.
    expect(report.results.filter((r) => r.sources.some((s) => s.lang === 'wat')).length).toBeGreaterThan(20);
  });

  it('renders its HTML report in headless Chromium, whose count of the cards matches the JSON, and keeps a screenshot', async () => {
    const dom = await renderedDom(html);
    const counted = /id="page-count">(\d+) results on this page: (\d+) passed, (\d+) failed</.exec(dom);
    expect(counted, 'the page script did not run: #page-count was not filled in').not.toBeNull();
    expect(counted!.slice(1).map(Number)).toEqual([report.summary.total, report.summary.passed, report.summary.failed]);
    expect(/id="summary-total">(\d+)</.exec(dom)?.[1]).toBe(String(report.summary.total));
    expect(/id="summary-coverage">(\d+)\/(\d+)</.exec(dom)?.slice(1)).toEqual([
      String(report.coverage.covered),
      String(report.coverage.requirements),
    ]);
    expect(dom).toContain('id="verdict">PASS<');

    mkdirSync(ARTIFACTS, { recursive: true });
    const png = path.join(ARTIFACTS, 'conformance-report.png');
    await screenshot(html, png);
    expect(existsSync(png)).toBe(true);
    const pixels = pngPixels(readFileSync(png));
    expect(pixels.width).toBe(1280);
    // A page that rendered has text and colour: many distinct byte values, not one flat fill.
    expect(pixels.distinctBytes).toBeGreaterThan(64);
    expect(statSync(png).size).toBeGreaterThan(20_000);
  }, 300_000);
});

/** The width and the number of distinct bytes of a PNG's decompressed image data. */
function pngPixels(png: Buffer): { width: number; distinctBytes: number } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  let width = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') width = data.readUInt32BE(0);
    if (type === 'IDAT') idat.push(data);
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const seen = new Set<number>();
  for (let i = 0; i < raw.length && seen.size < 256; i += 7) seen.add(raw[i]!);
  return { width, distinctBytes: seen.size };
}
