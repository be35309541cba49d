// Fuzz checks of random programs (loops, branches, calls, memory and table growth) run instrumented:
// the result of the program itself, exact and repeatable fuel, memory within the cap, and fuel
// running out one unit short (ABI-FUEL-001, ABI-FUEL-004, ABI-MEMORY-002, ABI-EXTISM-009).
import { FUEL_EXPORT, instrumentModule } from '../../../host/2-sandbox/wasm/index.js';
import { expect, expectOutcome, type Check, type GuestAbi } from '../../check.js';
import { extismGuestModule, guestModule, randomProgram, type Program } from '../../kit/fuzz-programs.js';
import { rand, sampleSeeds } from '../../kit/fuzz-random.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';
import { encoder, once, tally } from './shared.js';

interface ProgramCase {
  readonly id: string;
  readonly program: Program;
  readonly cap: number;
  /** The program as a module of each ABI (the same program as an extism/v1 plugin), and its text. */
  readonly modules: Readonly<Record<GuestAbi, Uint8Array>>;
  readonly sources: Readonly<Record<GuestAbi, string>>;
  /** What the program itself does, uninstrumented, with memory capped as the host caps it. */
  readonly expected: { output: unknown } | { trap: string };
  /** Fuel the instrumented module uses for one call, run in this process. */
  readonly fuel: bigint | undefined;
}

const INPUT = encoder.encode('{"n":1}');

/** Runs a helix/v1 module in this process as the host does (alloc, input, execute, dealloc), metered when `fuel` is given. */
async function runGuestHere(bytes: Uint8Array, fuel?: bigint): Promise<{ output?: unknown; trap?: string; used?: bigint }> {
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const x = instance.exports as Record<string, unknown> & {
    alloc(len: number): number;
    execute(ptr: number, len: number): bigint;
    dealloc(ptr: number, len: number): void;
  };
  if (fuel !== undefined) (x[FUEL_EXPORT] as WebAssembly.Global).value = fuel;
  try {
    const memory = x.memory as WebAssembly.Memory;
    const inPtr = x.alloc(INPUT.length) >>> 0;
    new Uint8Array(memory.buffer).set(INPUT, inPtr);
    const packed = x.execute(inPtr, INPUT.length) as bigint;
    const ptr = Number(packed >> 32n);
    const len = Number(packed & 0xffffffffn);
    const text = new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len).slice());
    x.dealloc(ptr, len);
    x.dealloc(inPtr, INPUT.length);
    const used = fuel === undefined ? undefined : fuel - ((x[FUEL_EXPORT] as WebAssembly.Global).value as bigint);
    return { output: (JSON.parse(text) as { output: unknown }).output, ...(used === undefined ? {} : { used }) };
  } catch (e) {
    return { trap: (e as Error).message };
  }
}

const programCases = once(
  async (): Promise<ProgramCase[]> =>
    Promise.all(
      sampleSeeds(0xf022_0003, 24).map(async (seed, i) => {
        const r = rand(seed);
        const program = randomProgram(r, { pages: [1, 3], tables: [0, 2] });
        const cap = r.int(program.pages, program.pages + 4);
        const effective = Math.min(program.maxPages ?? Infinity, cap);
        const sources = { 'helix/v1': guestModule(program), 'extism/v1': extismGuestModule(program) };
        const bytes = await wat2wasm(sources['helix/v1']);
        const reference = await runGuestHere(await wat2wasm(guestModule(program, { maxPages: effective })));
        const metered =
          reference.trap === undefined ? await runGuestHere(instrumentModule(bytes, { maxMemoryPages: cap }).bytes, 1n << 40n) : undefined;
        const extism = await wat2wasm(sources['extism/v1']);
        return {
          id: `fuzz.p${i}`,
          program,
          cap,
          modules: { 'helix/v1': bytes, 'extism/v1': extism },
          sources,
          expected: reference.trap === undefined ? { output: reference.output } : { trap: reference.trap },
          fuel: metered?.used,
        };
      }),
    ),
);

/** The programs that run to the end whose fuel is checked for exhaustion, with one unit less than they need. */
const EXHAUSTED = 6;

/** The first EXHAUSTED programs that run to the end. */
const finishing = (cases: readonly ProgramCase[]): ProgramCase[] => cases.filter((c) => c.fuel !== undefined).slice(0, EXHAUSTED);

/** The checks of this file, in the report's order. */
export const programFuzzChecks: readonly Check[] = [
  {
    id: 'fuzz.instrumented-programs',
    title: '24 random programs run instrumented with the result of the program itself and exact, repeatable fuel',
    category: 'fuzz',
    abi: ['ABI-FUEL-001', 'ABI-FUEL-004', 'ABI-MEMORY-002', 'ABI-EXTISM-009'],
    engines: ['helix', 'extism'],
    expected:
      'each program (loops, branches, calls, memory and table growth) answers what it answers uninstrumented with its memory maximum at the cap (or traps S-TOOL-TRAP where it traps), with metrics.fuel_used > 0, the same on a second call and equal to the fuel its instrumented module uses in this process, memory_peak_pages within the cap; and 6 of them, given one unit of fuel less than they need, end S-TOOL-FUEL-EXHAUSTED. On extism/v1 the same programs as plugins answer the same values, with fuel_used > 0 and the same on a second call',
    async packs(engine) {
      const cases = await programCases();
      const packs = cases.map((c) => engine.pack(c.id, c.modules[engine.abi], { limits: { ...DEFAULT_LIMITS, maxMemoryPages: c.cap } }));
      // One unit of fuel less than a program needs, where the check knows that fuel to the unit.
      if (engine.fuelKnownHere)
        for (const c of finishing(cases))
          packs.push(
            engine.pack(c.id.replace('.p', '.x'), c.modules[engine.abi], {
              limits: { ...DEFAULT_LIMITS, maxMemoryPages: c.cap, fuel: Number(c.fuel! - 1n) },
            }),
          );
      return packs;
    },
    async run(ctx) {
      const cases = await programCases();
      const exact = ctx.engine.fuelKnownHere;
      const outcomes: string[] = [];
      const fuelUsed: number[] = [];
      for (const c of cases) {
        const first = await ctx.call(c.id, { n: 1 });
        fuelUsed.push(first.metrics.fuel_used);
        const second = await ctx.call(c.id, { n: 2 });
        if ('trap' in c.expected) {
          expectOutcome(first, 'terminal_error', 'S-TOOL-TRAP');
          outcomes.push('trap');
        } else {
          const out = first.status === 'success' ? first.output : first.error;
          expect(
            first.status === 'success' && JSON.stringify(first.output) === JSON.stringify(c.expected.output),
            `${c.id}: answered ${first.status} ${JSON.stringify(out)}, the program itself answers ${JSON.stringify(c.expected.output)}`,
          );
          // The helix/v1 guest's fuel is known to the unit: its instrumented module run here, as the host runs it.
          if (exact)
            expect(
              first.metrics.fuel_used === Number(c.fuel),
              `${c.id}: fuel_used ${first.metrics.fuel_used}, its instrumented module uses ${c.fuel} in this process`,
            );
          outcomes.push('success');
        }
        expect(
          second.status === first.status && JSON.stringify(second.output) === JSON.stringify(first.output),
          `${c.id}: a second call answered differently`,
        );
        expect(
          first.metrics.fuel_used > 0 && second.metrics.fuel_used === first.metrics.fuel_used,
          `${c.id}: fuel_used ${first.metrics.fuel_used} then ${second.metrics.fuel_used}`,
        );
        expect(
          first.metrics.memory_peak_pages <= c.cap,
          `${c.id}: memory_peak_pages ${first.metrics.memory_peak_pages} above the cap of ${c.cap}`,
        );
      }
      ctx.observe('outcomes', tally(outcomes));
      ctx.observe('fuel_used', fuelUsed);
      ctx.show({
        label: `${cases[0]!.id} (module)`,
        lang: 'wat',
        text: cases[0]!.sources[ctx.engine.abi],
      });
      if (!exact) return;
      for (const c of finishing(cases)) {
        const r = await ctx.call(c.id.replace('.p', '.x'), { n: 1 });
        expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
        expect(
          r.error?.details.fuel_limit === Number(c.fuel! - 1n),
          `${c.id}: details.fuel_limit ${String(r.error?.details.fuel_limit)}, the budget was ${c.fuel! - 1n}`,
        );
      }
      ctx.observe('exhausted_with_one_unit_less', finishing(cases).length);
    },
  },
];
