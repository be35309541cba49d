// Fuel overhead: bench.compute (iterated SHA-256) instrumented against uninstrumented, both
// in-process on reused instances, interleaved so drift in the machine's load hits both alike.
import { FUEL_EXPORT, instrumentModule, START_EXPORT } from '../host/2-sandbox/wasm/index.js';
import { callInstance, fixture, type Exports } from './call-path.js';
import type { BenchConfig } from './options.js';
import { makeRow, type Row } from './rows.js';
import { median, medianMs } from './stats.js';

const BLOCKS = 7;
const PER_BLOCK = 3;

/** The fuel-overhead row: instrumented vs uninstrumented median, target at most 1.10x. */
export function fuelRows(config: BenchConfig): Row[] {
  const compute = fixture('compute');
  const plain = new WebAssembly.Instance(new WebAssembly.Module(compute.bytes), {}).exports as Exports;
  const inst = instrumentModule(compute.bytes, { maxMemoryPages: 65536 });
  const metered = new WebAssembly.Instance(new WebAssembly.Module(inst.bytes), {}).exports as Exports;
  const fuel = metered[FUEL_EXPORT] as WebAssembly.Global;
  fuel.value = 1n << 62n;
  if (inst.hasStart) (metered[START_EXPORT] as () => void)();
  const input = { rounds: config.computeRounds };
  const a = callInstance(plain, input);
  const b = callInstance(metered, input);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`instrumented output differs: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  const before = fuel.value as bigint;
  callInstance(metered, input);
  const fuelPerCall = Number(before - (fuel.value as bigint));
  const plainMs: number[] = [];
  const meteredMs: number[] = [];
  for (let i = 0; i < BLOCKS; i++) {
    plainMs.push(medianMs(() => callInstance(plain, input), PER_BLOCK));
    fuel.value = 1n << 62n;
    meteredMs.push(medianMs(() => callInstance(metered, input), PER_BLOCK));
  }
  return [
    makeRow({
      id: 'fuel.overhead',
      name: `bench.compute (rounds ${config.computeRounds}) instrumented for fuel, median of ${BLOCKS}x${PER_BLOCK} interleaved`,
      unit: 'ms',
      figure: median(meteredMs),
      baseline: { name: 'uninstrumented', figure: median(plainMs) },
      target: { of: 'ratio', op: '<=', value: 1.1 },
      samples: BLOCKS * PER_BLOCK,
      note: `${fuelPerCall.toLocaleString('en')} fuel per call`,
    }),
  ];
}
