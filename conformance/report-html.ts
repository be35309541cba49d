// The conformance report as one self-contained HTML page (no scripts, no outside resources).
import type { Report } from './report.js';

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page. */
export function renderHtml(report: Report): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Helix conformance</title></head><body>
<h1>Helix conformance</h1>
<p id="summary-total">${report.summary.total}</p><p id="summary-passed">${report.summary.passed}</p><p id="summary-failed">${report.summary.failed}</p>
${report.results.map((r) => `<section><h3>${esc(r.id)} ${esc(r.engine)} ${esc(r.verdict)}</h3></section>`).join('\n')}
</body></html>
`;
}
