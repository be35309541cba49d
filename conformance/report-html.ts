// The conformance report as one self-contained HTML page for a reviewer's browser: the verdict
// and the counts first, then the coverage of abi/ABI.md, then every check on every engine with
// its ABI ids, expected outcome, verdict, evidence and sources. No outside resources; one small
// inline script only recounts the results on the page into `#page-count`, so a browser (and the
// test that opens the page in headless Chromium) shows the page's own cards agree with the summary.
import { CATEGORIES, CATEGORY_TITLES, ENGINES, type Category } from './check.js';
import type { Counts, Report } from './report.js';
import type { CheckResult } from './runner.js';

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
const ms = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`);
const anchor = (s: string): string => s.replace(/[^A-Za-z0-9-]/g, '-');

const STYLE = `
:root { --pass: #13794b; --fail: #b42318; --ink: #1d2433; --muted: #5b6475; --line: #d9dee7; --bg: #f6f8fb; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0; background: var(--bg); }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 20px 32px; }
main { padding: 8px 32px 48px; max-width: 1200px; }
h1 { margin: 0 0 4px; font-size: 22px; }
h2 { margin: 28px 0 8px; font-size: 18px; }
h3 { margin: 20px 0 6px; font-size: 15px; color: var(--muted); }
.meta { color: var(--muted); }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; color: #fff; }
.verdict.pass { background: var(--pass); } .verdict.fail { background: var(--fail); }
.cards { display: flex; gap: 12px; margin: 14px 0; flex-wrap: wrap; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 130px; }
.card .n { font-size: 26px; font-weight: 700; display: block; }
.card.passed .n { color: var(--pass); } .card.failed .n { color: var(--fail); }
table { border-collapse: collapse; background: #fff; width: 100%; margin: 6px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f6; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
details.result { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--pass); border-radius: 6px; margin: 6px 0; }
details.result.fail { border-left-color: var(--fail); }
details.result > summary { cursor: pointer; padding: 6px 10px; list-style: none; display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
details.result > summary .id { font-family: ui-monospace, monospace; font-weight: 600; }
details.result > summary .engine { font-size: 12px; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 6px; }
details.result > summary .title { color: var(--muted); }
.body { padding: 4px 14px 12px; }
.body dt { font-weight: 600; margin-top: 6px; }
.body dd { margin: 0 0 4px 0; }
.abi a { font-family: ui-monospace, monospace; font-size: 12px; margin-right: 6px; }
.failure { color: var(--fail); white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 12px; }
pre { background: #0f1729; color: #e6edf3; padding: 10px; border-radius: 6px; overflow-x: auto; font-size: 12px; max-height: 420px; }
.missing { color: var(--fail); font-weight: 600; }
`;

/** Recounts the result cards of the page into #page-count: what the browser shows, from the page itself. */
const RECOUNT = `
const all = document.querySelectorAll('details.result');
const failed = document.querySelectorAll('details.result[data-verdict="fail"]').length;
document.getElementById('page-count').textContent = all.length + ' results on this page: ' + (all.length - failed) + ' passed, ' + failed + ' failed';
`;

/** The page. */
export function renderHtml(report: Report): string {
  const s = report.summary;
  const cov = report.coverage;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Helix conformance: ${report.ok ? 'pass' : 'FAIL'} (${s.passed}/${s.total})</title><style>${STYLE}</style></head>
<body>
<header>
<h1>Helix conformance report <span class="verdict ${report.ok ? 'pass' : 'fail'}" id="verdict">${report.ok ? 'PASS' : 'FAIL'}</span></h1>
<div class="meta">Helix ${esc(report.helixVersion)} · ${esc(report.startedAt)} · ${ms(report.durationMs)} · Node ${esc(report.machine.node)} on ${esc(report.machine.platform)} ${esc(report.machine.arch)}, ${report.machine.cpus} CPUs, ${mib(report.machine.memoryBytes)}</div>
<div class="meta">Engines: ${esc(report.selection.engines.join(', '))}${report.selection.only.length > 0 ? ` · only: ${esc(report.selection.only.join(', '))}` : ''} · ${report.checks.selected} of ${report.checks.inSuite} checks selected</div>
</header>
<main>
<h2>Summary</h2>
<div class="cards">
  <div class="card"><span class="n" id="summary-total">${s.total}</span>results</div>
  <div class="card passed"><span class="n" id="summary-passed">${s.passed}</span>passed</div>
  <div class="card failed"><span class="n" id="summary-failed">${s.failed}</span>failed</div>
  <div class="card"><span class="n" id="summary-coverage">${cov.covered}/${cov.requirements}</span>ABI requirements with a check</div>
</div>
<p class="meta" id="page-count">(recounted by the browser)</p>
${countsTable(
  'By engine',
  ENGINES.filter((e) => s.byEngine[e] !== undefined).map((e) => [e, s.byEngine[e]!]),
)}
${countsTable(
  'By category',
  CATEGORIES.filter((c) => s.byCategory[c] !== undefined).map((c) => [CATEGORY_TITLES[c], s.byCategory[c]!]),
)}
${coverageSection(report)}
<h2>Checks</h2>
<p class="meta">Each check ran on a host of its own (its toolpacks, its policy, a new store); after it, the same host had to answer a well-behaved call (“survival”). Failed checks are open.</p>
${CATEGORIES.map((c) =>
  categorySection(
    c,
    report.results.filter((r) => r.category === c),
  ),
).join('\n')}
</main>
<script>${RECOUNT}</script>
</body></html>
`;
}

function countsTable(title: string, rows: readonly (readonly [string, Counts])[]): string {
  if (rows.length === 0) return '';
  return `<h3>${esc(title)}</h3><table><tr><th></th><th>results</th><th>passed</th><th>failed</th></tr>
${rows.map(([name, c]) => `<tr><td>${esc(name)}</td><td class="num">${c.total}</td><td class="num">${c.passed}</td><td class="num">${c.failed}</td></tr>`).join('\n')}</table>`;
}

function coverageSection(report: Report): string {
  const cov = report.coverage;
  const problems = [
    cov.uncovered.length === 0
      ? ''
      : `<p class="missing" id="uncovered">No check backs ${cov.uncovered.length} requirement(s): ${esc(cov.uncovered.join(' '))}</p>`,
    cov.unknown.length === 0 ? '' : `<p class="missing">Checks cite ids ABI.md does not define: ${esc(cov.unknown.join('; '))}</p>`,
  ].join('');
  const rows = cov.map
    .map(
      (r) =>
        `<tr id="${anchor(r.id)}"><td><code>${esc(r.id)}</code></td><td>${esc(r.section)}</td><td>${esc(r.summary)}</td><td>${
          r.checks.length === 0
            ? '<span class="missing">none</span>'
            : r.checks.map((c) => `<a href="#${anchor(c)}">${esc(c)}</a>`).join(', ')
        }</td></tr>`,
    )
    .join('\n');
  return `<h2>Coverage of abi/ABI.md</h2>
<p>${cov.covered} of ${cov.requirements} requirements are cited by at least one check of the suite (the whole suite, whatever this run selected).</p>${problems}
<details><summary>Every requirement and the checks that back it</summary>
<table><tr><th>id</th><th>section</th><th>requirement (first sentence)</th><th>checks</th></tr>
${rows}</table></details>`;
}

function categorySection(category: Category, results: readonly CheckResult[]): string {
  if (results.length === 0) return '';
  const failed = results.filter((r) => r.verdict === 'fail').length;
  return `<h3 id="category-${category}">${esc(CATEGORY_TITLES[category])} — ${results.length - failed}/${results.length} passed</h3>
${results.map(resultCard).join('\n')}`;
}

function resultCard(r: CheckResult): string {
  const ev = r.evidence;
  const calls =
    ev.calls.length === 0
      ? ''
      : `<dt>Calls</dt><dd><table><tr><th>tool</th><th>status</th><th>code</th><th>fuel</th><th>pages</th><th>time</th></tr>
${ev.calls
  .map(
    (c) =>
      `<tr><td><code>${esc(c.tool)}</code></td><td>${esc(c.status)}${c.replayed === true ? ' (replayed)' : ''}</td><td>${c.code === undefined ? '' : `<code>${esc(c.code)}</code>`}${
        c.message === undefined ? '' : `<br><span class="meta">${esc(c.message)}</span>`
      }</td><td class="num">${c.fuelUsed ?? ''}</td><td class="num">${c.memoryPeakPages ?? ''}</td><td class="num">${ms(c.durationMs)}</td></tr>`,
  )
  .join('\n')}</table></dd>`;
  const observations =
    Object.keys(ev.observations).length === 0
      ? ''
      : `<dt>Observations</dt><dd><pre>${esc(JSON.stringify(ev.observations, null, 2))}</pre></dd>`;
  const notes = ev.notes.length === 0 ? '' : `<dt>Notes</dt><dd><ul>${ev.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></dd>`;
  const sources = r.sources
    .map((src) => `<details><summary>${esc(src.label)} (${esc(src.lang)})</summary><pre>${esc(src.text)}</pre></details>`)
    .join('\n');
  return `<details class="result ${r.verdict}" data-verdict="${r.verdict}" data-check="${esc(r.id)}" data-engine="${esc(r.engine)}" id="${anchor(r.id)}-${r.engine}"${r.verdict === 'fail' ? ' open' : ''}>
<summary><span class="verdict ${r.verdict}">${r.verdict === 'pass' ? 'PASS' : 'FAIL'}</span><span class="id" id="${anchor(r.id)}">${esc(r.id)}</span><span class="engine">${esc(r.engine)}</span><span class="title">${esc(r.title)}</span></summary>
<div class="body"><dl>
<dt>Requirements</dt><dd class="abi">${r.abi.map((id) => `<a href="#${anchor(id)}">${esc(id)}</a>`).join('')}</dd>
<dt>Expected</dt><dd>${esc(r.expected)}</dd>
${r.failure === undefined ? '' : `<dt>Why it failed</dt><dd class="failure">${esc(r.failure)}</dd>`}
<dt>Evidence</dt><dd>${ms(ev.durationMs)} · peak host memory +${mib(ev.peakRssDeltaBytes)}${ev.fuelUsed === null ? '' : ` · fuel ${ev.fuelUsed}`} · survival: ${ev.survival.ok ? 'yes' : '<b>no</b>'}, ${esc(ev.survival.detail)} (${ms(ev.survival.durationMs)})</dd>
${calls}${observations}${notes}
${sources === '' ? '' : `<dt>Sources</dt><dd>${sources}</dd>`}
</dl></div></details>`;
}
