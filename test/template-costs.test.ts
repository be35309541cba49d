// The guide's table of the templates' costs is what they cost (scripts/template-costs.ts): each
// template, made by `helix new` and built as made, is measured again on the same generated
// files. Fuel and memory are deterministic, so the guide's table must be exactly the new
// measurement's (regenerate it with `npm run gen:costs` after changing a template or the SDK),
// and every template's declared limits.perInputMiB.fuel must leave a fifth of headroom over the
// costliest data measured.
import { describe, expect, it } from 'vitest';
import { guideCostTable, measureTemplateCosts, renderCostTable, thinHeadroom, type CostRow } from '../scripts/template-costs.js';

describe("the templates' costs in the guide", () => {
  let rows: CostRow[] = [];
  it('are measured for every template on every kind of data', async () => {
    rows = await measureTemplateCosts();
    expect(new Set(rows.map((r) => r.lang))).toEqual(new Set(['as', 'c', 'extism']));
    expect(rows).toHaveLength(9);
    for (const r of rows) {
      expect(r.fuelPerMiB, `${r.lang} ${r.shape}`).toBeGreaterThan(1e6);
      expect(r.memoryPeakPages, `${r.lang} ${r.shape}`).toBeGreaterThan(0);
    }
  }, 600_000);

  it('are the table the guide shows, generated and not typed', () => {
    const { file, table } = guideCostTable();
    expect(table, `${file} has no template-costs markers`).toBeDefined();
    expect(table, 'the guide is stale: run `npm run gen:costs`').toBe(renderCostTable(rows));
  });

  it('leave a fifth of headroom under each declared rate', () => {
    expect(thinHeadroom(rows)).toEqual([]);
  });
});
