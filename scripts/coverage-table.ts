// Prints the README's coverage table from a run's coverage/coverage-summary.json (`npm test`
// writes it): line and branch coverage per module, its floor, and the floor the run would give.
//   node dist/scripts/coverage-table.js [coverage/coverage-summary.json]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COVERAGE_MODULES, type Count, floorFor, inModule } from './coverage-modules.js';

type Summary = Record<string, { lines: Count; branches: Count }>;

/** Percent covered; a module without branches (or lines) is fully covered. */
function percent(c: Count): number {
  return c.total === 0 ? 100 : (100 * c.covered) / c.total;
}

/** A figure as the table prints it: rounded down to one decimal, so it never shows more than was measured. */
function shown(c: Count): string {
  return `${(Math.floor(10 * percent(c)) / 10).toFixed(1)} (${c.covered}/${c.total})`;
}

/** The table's rows: each module's files, its measured figures and the floors in force. */
export function coverageRows(summary: Summary, root: string): string[][] {
  const files = Object.keys(summary).filter((k) => k !== 'total');
  return COVERAGE_MODULES.map((m) => {
    const mine = files.filter((f) => inModule(path.relative(root, f).split(path.sep).join('/'), m.glob));
    const sum = (key: 'lines' | 'branches'): Count => {
      const acc = { total: 0, covered: 0 };
      for (const f of mine) {
        acc.total += summary[f]?.[key].total ?? 0;
        acc.covered += summary[f]?.[key].covered ?? 0;
      }
      return acc;
    };
    const lines = sum('lines');
    const branches = sum('branches');
    return [
      `\`${m.name}\``,
      String(mine.length),
      shown(lines),
      shown(branches),
      `${m.floor.lines} / ${m.floor.branches}`,
      `${floorFor(lines)} / ${floorFor(branches)}`,
    ];
  });
}

function main(): void {
  const root = process.cwd();
  const file = path.resolve(root, process.argv[2] ?? 'coverage/coverage-summary.json');
  const summary = JSON.parse(readFileSync(file, 'utf8')) as Summary;
  const head = ['module', 'files', 'lines %', 'branches %', 'floor (lines / branches)', 'this run gives'];
  const rows = coverageRows(summary, root);
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  process.stdout.write(`${[line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n')}\n`);
}

main();
