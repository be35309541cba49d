// The done-when of an author on real data (sdk-guest/GUIDE.md, "A tool on a multi-GB file"): a
// tool made by `helix new` in AssemblyScript and in C, built as made, reads a 10 GB generated
// FASTQ through the real CLI under the embedded default policy, its budgets growing with the
// input (scripts/template-big-data.ts). Every figure must be the generator's, both languages must
// write the same lengths TSV, and each process's peak anonymous memory must stay far below the
// file. HELIX_TEMPLATE_BIG_DATA_BYTES sets another size.
import { describe, expect, it } from 'vitest';
import { runTemplateBigData } from '../scripts/template-big-data.js';

const BYTES = Number(process.env.HELIX_TEMPLATE_BIG_DATA_BYTES ?? 10e9);
const ANON_BOUND = 512 * 1024 ** 2;
const mib = (b: number): string => `${(b / 1024 ** 2).toFixed(0)} MiB`;

describe(`a ${mib(BYTES)} FASTQ read by the templates' tools`, () => {
  it(
    'gives the generator’s record count and total length in each language, the same TSV, in flat memory',
    async () => {
      const r = await runTemplateBigData(BYTES);
      process.stdout.write(
        `template big data: ${mib(r.facts.bytes)}, ${r.facts.records} reads, generated in ${r.generateMs} ms, imported in ${r.importMs} ms; ${r.steps
          .map(
            (s) =>
              `tpl.${s.lang}: wall ${s.wallMs} ms, duration ${s.metrics.duration_ms} ms, fuel ${s.metrics.fuel_used} (${(s.metrics.fuel_used / r.facts.bytes).toFixed(2)} per byte), ${s.metrics.memory_peak_pages} pages, peak anonymous ${mib(s.peakAnonBytes)}, TSV ${mib(s.lengthsBytes)}`,
          )
          .join('; ')}\n`,
      );
      expect(r.mismatches).toEqual([]);
      expect(r.steps.map((s) => s.lang)).toEqual(['as', 'c']);
      for (const s of r.steps) {
        expect(s.peakAnonBytes, s.lang).toBeGreaterThan(0);
        expect(s.peakAnonBytes, s.lang).toBeLessThan(ANON_BOUND);
        // The TSV has a line per record: more bytes than records, far fewer than the file.
        expect(s.lengthsBytes, s.lang).toBeGreaterThan(r.facts.records);
        expect(s.lengthsBytes, s.lang).toBeLessThan(r.facts.bytes / 4);
      }
    },
    3 * 3600_000,
  );
});
