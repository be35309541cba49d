// The 4 GB test (README "Bundled toolpacks", data of real size): a FASTQ of 4 GiB, generated deterministically and streamed to disk,
// goes through the real CLI (import, seq.stats, fastq.filter, seq.kmer_count) under the bundled
// manifests and the embedded default policy (scripts/big-data.ts); every figure must be what the
// generator wrote, each process's peak anonymous memory must stay far below the file (the mapped
// store's pages, which the kernel can drop, are reported beside it), and the file and the
// store are deleted afterwards, also on failure. HELIX_BIG_DATA_BYTES sets another size.
import { describe, expect, it } from 'vitest';
import { runBigData } from '../scripts/big-data.js';

const BYTES = Number(process.env.HELIX_BIG_DATA_BYTES ?? 4 * 1024 ** 3);
// Far below the 4 GiB file: a process that held an eighth of it would fail.
const ANON_BOUND = 512 * 1024 ** 2;
const mib = (b: number): string => `${(b / 1024 ** 2).toFixed(0)} MiB`;

describe(`a ${mib(BYTES)} FASTQ with the bundled defaults`, () => {
  it(
    'imports it and gives the generator’s figures from seq.stats, fastq.filter and seq.kmer_count, in flat memory',
    async () => {
      const r = await runBigData(BYTES);
      const steps = Object.entries(r.steps);
      process.stdout.write(
        `big data: ${mib(r.facts.bytes)}, ${r.facts.records} reads; ${steps.map(([k, s]) => `${k}: peak anonymous ${mib(s.peakAnonBytes)} (VmHWM ${mib(s.peakRssBytes)}), wall ${s.wallMs} ms, fuel ${s.metrics?.fuel_used ?? '-'}`).join('; ')}\n`,
      );
      expect(r.mismatches).toEqual([]);
      for (const [what, s] of steps) {
        expect(s.peakAnonBytes, what).toBeGreaterThan(0);
        expect(s.peakAnonBytes, what).toBeLessThan(ANON_BOUND);
      }
    },
    4 * 3600_000,
  );
});
