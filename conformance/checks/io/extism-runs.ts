// io checks of extism/v1 runs as runs: an input larger than the capped kernel memory, fuel, memory
// and the deadline held as for helix/v1, and runs recorded, replayed and verified (ABI-EXTISM-009,
// ABI-EXTISM-010).
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { EXTISM_ECHO } from '../../kit/canary.js';
import { extismWat } from '../../kit/extism-wat.js';
import { expectDetails, expectGuestFault, IO_LIMITS, ioPack, runOf } from '../../kit/io-support.js';

/** The checks of this file, in the report's order. */
export const extismRunChecks: readonly Check[] = [
  {
    id: 'io.extism-input-over-kernel-memory',
    title:
      "An input larger than an Extism plugin's capped kernel memory ends the call before any plugin code runs, and does not take the worker down",
    category: 'io',
    abi: ['ABI-EXTISM-009'],
    engines: ['extism'],
    expected:
      'with maxMemoryPages 16 (1 MiB) and maxInputBytes 4 MB: a 1.2 MB input is terminal_error S-TOOL-TRAP naming input_bytes and max_memory_pages 16 (not S-TOOL-WORKER-LOST, which a retry could never cure); a 0.9 MB input then succeeds on the same host',
    packs: () => [
      {
        id: 'io.extism_length',
        // Outputs {"n":<input length mod 10>}: it reads the input's length, so the input must be placed.
        module: extismWat(
          `(i32.store8 (i32.const 5) (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (call $input_length) (i64.const 10)))))
   (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
   (i32.const 0)`,
          { data: '{\\"n\\":0}' },
        ),
        manifest: { abi: 'extism/v1', entrypoint: 'run', limits: { ...IO_LIMITS, maxInputBytes: 4_000_000, maxMemoryPages: 16 } },
      },
    ],
    async run(ctx) {
      const big = { pad: 'y'.repeat(1_200_000) };
      const r = await ctx.call('io.extism_length', big);
      expectOutcome(r, 'terminal_error', 'S-TOOL-TRAP');
      expectDetails(r, { max_memory_pages: 16, input_bytes: JSON.stringify(big).length });
      ctx.observe('refused', { code: r.error?.code, message: r.error?.message, details: r.error?.details });
      const fits = { pad: 'y'.repeat(900_000) };
      const ok = expectSuccess(await ctx.call('io.extism_length', fits));
      expect(ok.n === JSON.stringify(fits).length % 10, `the plugin saw another input length: ${JSON.stringify(ok)}`);
    },
  },
  {
    id: 'io.extism-limits',
    title: 'An extism/v1 plugin is held to fuel, memory and the deadline as a helix/v1 guest is',
    category: 'io',
    abi: ['ABI-EXTISM-009'],
    engines: ['extism'],
    expected:
      'S-TOOL-FUEL-EXHAUSTED with fuel_used at least the 2,000,000 budget; S-TOOL-TRAP with memory_pages 16 = max_memory_pages for growth without end; R-TIMEOUT-001 at a 300 ms deadline for a spin with unbounded fuel, within 5 s',
    packs: (engine) => {
      const spin = extismWat('(loop $l (br $l)) (i32.const 0)');
      return [
        ioPack(engine, 'io.spin_fuel', spin, { limits: { ...IO_LIMITS, fuel: 2_000_000 } }),
        ioPack(engine, 'io.spin_time', spin, { timeoutMs: 300, limits: { ...IO_LIMITS, fuel: 1e13 } }),
        ioPack(engine, 'io.grow', extismWat('(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable'), {
          limits: { ...IO_LIMITS, maxMemoryPages: 16 },
        }),
      ];
    },
    async run(ctx) {
      const fuel = await ctx.call('io.spin_fuel', {});
      await expectGuestFault(ctx, fuel, 'S-TOOL-FUEL-EXHAUSTED');
      expect(fuel.metrics.fuel_used >= 2_000_000, `fuel_used ${fuel.metrics.fuel_used}`);
      const grow = await ctx.call('io.grow', {});
      await expectGuestFault(ctx, grow, 'S-TOOL-TRAP', { memory_pages: 16, max_memory_pages: 16 });
      const t0 = performance.now();
      const time = await ctx.call('io.spin_time', { after: 'warm' });
      const ms = performance.now() - t0;
      expectOutcome(time, 'retryable_error', 'R-TIMEOUT-001');
      expect(ms < 5000, `the deadline of 300 ms took ${Math.round(ms)} ms`);
      ctx.observe('timeout_ms', Math.round(ms));
    },
  },
  {
    id: 'io.extism-recorded',
    title: 'extism/v1 runs are recorded, replayed and verified, their module record naming the ABI',
    category: 'io',
    abi: ['ABI-EXTISM-010'],
    engines: ['extism'],
    expected:
      'a success is recorded succeeded, the same call replays it (replayed true, same run), verifyRun re-executes it and matches, and the store module record of its digest says extism/v1; a failed run is not replayed',
    packs: (engine) => [ioPack(engine, 'io.echo', EXTISM_ECHO), ioPack(engine, 'io.ret7', extismWat('(i32.const 7)'))],
    async run(ctx) {
      const input = { run: 'recorded', n: 42 };
      const first = await ctx.call('io.echo', input);
      expectSuccess(first);
      const run = await runOf(ctx, first);
      expect(run?.status === 'succeeded', `the run is ${run?.status}`);
      const again = await ctx.call('io.echo', input);
      expect(again.replayed === true && again.run_id === first.run_id, `the same call was not replayed (${again.replayed})`);
      const host = await ctx.host();
      const report = await host.runs.verify(first.run_id!, 30_000);
      expect(report.match && report.checks.every((c) => c.ok), `verify did not match: ${JSON.stringify(report).slice(0, 600)}`);
      const record = host.modules.get(first.provenance.digest!);
      expect(
        record !== undefined && JSON.stringify(record).includes('extism/v1'),
        `the module record does not name extism/v1: ${JSON.stringify(record).slice(0, 300)}`,
      );
      const f1 = await ctx.call('io.ret7', {});
      const f2 = await ctx.call('io.ret7', {});
      expect(f1.status === 'terminal_error' && f2.replayed === false, 'a failed extism/v1 run was replayed');
      ctx.observe(
        'verify',
        report.checks.map((c) => c.check),
      );
    },
  },
];
