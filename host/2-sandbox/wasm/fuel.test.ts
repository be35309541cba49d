// Tests of fuel metering on real instances: exhaustion traps with a negative counter, costs are
// deterministic and linear in work done, bulk and grow operations are charged by size before
// they run, and the counter stays right across calls, host calls and exception handlers.

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { COSTS, FUEL_EXPORT, instrumentModule, START_EXPORT } from './index.js';
import { instantiate, metered, meteredGuarded, wat } from '../../../test/helpers/wasm.js';

v8.setFlagsFromString('--experimental-wasm-memory64');

async function load(text: string, imports: WebAssembly.Imports = {}) {
  const result = instrumentModule(await wat(text), { maxMemoryPages: 64 });
  return { result, exports: await instantiate(result.bytes, imports) };
}

const counting = `(module (memory (export "memory") 1)
  (func (export "count") (param $n i32) (result i32) (local $i i32) (local $acc i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $acc (i32.add (local.get $acc) (i32.mul (local.get $i) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $acc))
  (func (export "fill") (param i32) (memory.fill (i32.const 0) (i32.const 1) (local.get 0)))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))`;

describe('fuel metering', () => {
  it('fuel metering traps an endless loop with the counter negative', async () => {
    const { result } = await load('(module (func (export "spin") (loop (br 0))))');
    const run = await meteredGuarded(result.bytes, 'spin', [], 10_000n);
    expect(run.trapped).toBe(true);
    expect(run.remaining).toBeLessThan(0n);
  });

  it('fuel metering traps unbounded recursion before the stack overflows', async () => {
    const { exports } = await load(
      '(module (func $r (export "rec") (param i32) (result i32) (call $r (i32.add (local.get 0) (i32.const 1)))))',
    );
    const run = metered(exports, 'rec', [0], 20_000n);
    expect(run.error).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(run.remaining).toBeLessThan(0n);
  });

  it('fuel metering traps tail-call recursion, which never grows the stack', async () => {
    const { result } = await load('(module (func $r (export "rec") (param i32) (result i32) (return_call $r (local.get 0))))');
    const run = await meteredGuarded(result.bytes, 'rec', [0], 20_000n);
    expect(run.trapped).toBe(true);
    expect(run.remaining).toBeLessThan(0n);
  });

  it('fuel metering reports the same fuel for the same call twice', async () => {
    const { exports } = await load(counting);
    const first = metered(exports, 'count', [1000]);
    const second = metered(exports, 'count', [1000]);
    expect(first.result).toBe(second.result);
    expect(first.used).toBe(second.used);
  });

  it('fuel metering charges the same amount for each further loop iteration', async () => {
    const { exports } = await load(counting);
    const used = (n: number) => metered(exports, 'count', [n]).used;
    const step = used(2000) - used(1000);
    expect(step).toBeGreaterThanOrEqual(1000n * 10n); // at least the loop body's 10 instructions per iteration
    expect(used(3000) - used(2000)).toBe(step);
  });

  it('fuel metering charges memory.fill one unit per 64 bytes before it runs', async () => {
    const { exports } = await load(counting);
    const n = 40 * 1024;
    const extra = metered(exports, 'fill', [n]).used - metered(exports, 'fill', [0]).used;
    expect(extra).toBeGreaterThanOrEqual(BigInt(n / COSTS.bulkBytesPerUnit));
    expect(extra).toBe(BigInt(n / 64));
    const fresh = (await load(counting)).exports;
    const starved = metered(fresh, 'fill', [n], 100n);
    expect(starved.error).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(new Uint8Array((fresh.memory as WebAssembly.Memory).buffer)[0]).toBe(0);
  });

  it('fuel metering charges memory.grow 1024 units per page requested, even when the grow fails', async () => {
    const { exports } = await load(counting);
    const base = metered(exports, 'grow', [0]).used;
    expect(metered(exports, 'grow', [3]).used - base).toBe(3n * BigInt(COSTS.growPageUnits));
    const failing = metered(exports, 'grow', [100_000]);
    expect(failing.result).toBe(-1);
    expect(failing.used - base).toBe(100_000n * 1024n);
    const starved = metered(exports, 'grow', [1], 500n);
    expect(starved.error).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(starved.remaining).toBeLessThan(0n);
  });

  it('fuel metering charges memory64 grow and fill from i64 operands', async () => {
    const { exports } = await load(`(module (memory i64 1)
      (func (export "g") (param i64) (result i64) (memory.grow (local.get 0)))
      (func (export "f") (param i64) (memory.fill (i64.const 0) (i32.const 0) (local.get 0))))`);
    expect(metered(exports, 'g', [2n]).used - metered(exports, 'g', [0n]).used).toBe(2048n);
    expect(metered(exports, 'f', [6400n]).used - metered(exports, 'f', [0n]).used).toBe(100n);
    const huge = metered(exports, 'g', [-1n], 1n << 60n);
    expect(huge.result).toBe(-1n);
    expect(huge.used - metered(exports, 'g', [0n]).used).toBe(1n << 50n);
  });

  it('fuel metering charges table.grow and table.fill one unit per element', async () => {
    const { exports } = await load(`(module (table 0 externref)
      (func (export "tg") (param i32) (result i32) (table.grow (ref.null extern) (local.get 0)))
      (func (export "tf") (param i32) (table.fill (i32.const 0) (ref.null extern) (local.get 0))))`);
    expect(metered(exports, 'tg', [500]).used - metered(exports, 'tg', [0]).used).toBe(500n);
    expect(metered(exports, 'tf', [300]).used - metered(exports, 'tf', [0]).used).toBe(300n);
  });

  it('fuel metering sees fuel a host function spends during a call', async () => {
    let fuel: WebAssembly.Global | undefined;
    const { exports } = await load(
      `(module (import "host" "spend" (func $spend))
        (func (export "run") (param i32) (result i32) (local $i i32)
          (call $spend)
          (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (local.get 0))))
          (local.get $i)))`,
      {
        host: {
          spend: () => {
            fuel!.value = (fuel!.value as bigint) - 1_000_000n;
          },
        },
      },
    );
    fuel = exports[FUEL_EXPORT] as WebAssembly.Global;
    const run = metered(exports, 'run', [10]);
    expect(run.result).toBe(10);
    expect(run.used).toBeGreaterThan(1_000_000n);
  });

  it('fuel metering keeps what a callee spent before throwing into a catch handler', async () => {
    for (const handler of ['legacy', 'exnref'] as const) {
      const catching =
        handler === 'legacy'
          ? '(try (result i32) (do (call $work (local.get 0)) (i32.const 0)) (catch $e (i32.const 1)))'
          : '(block $h (try_table (catch $e $h) (call $work (local.get 0))) (return (i32.const 0))) (i32.const 1)';
      const original = await wat(`(module (tag $e)
        (func $work (param i32) (local $i i32)
          (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (local.get 0))))
          (throw $e))
        (func (export "run") (param i32) (result i32) ${catching} (i32.add (i32.const 1))))`);
      const result = instrumentModule(original, { maxMemoryPages: 1 });
      if (handler === 'exnref') continue; // V8 11.3 cannot run exnref; the decode tests cover it
      const exports = await instantiate(result.bytes);
      const used = (n: number) => metered(exports, 'run', [n]).used;
      expect(metered(exports, 'run', [5]).result).toBe(2);
      const step = used(200) - used(100);
      expect(step).toBeGreaterThanOrEqual(100n * 5n);
      expect(used(300) - used(200)).toBe(step);
    }
  });

  it('fuel metering exports the counter as a mutable i64 global starting at 0', async () => {
    const { exports } = await load('(module (func (export "f")))');
    const fuel = exports[FUEL_EXPORT] as WebAssembly.Global;
    expect(fuel.value).toBe(0n);
    fuel.value = 5n;
    expect(fuel.value).toBe(5n);
  });

  it('instrumentModule turns the start function into a metered export that instantiation does not run', async () => {
    const text = `(module (global $g (mut i32) (i32.const 0))
      (func $init (local $i i32) (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (i32.const 50))))
        (global.set $g (i32.const 42)))
      (start $init)
      (func (export "get") (result i32) (global.get $g)))`;
    const plain = await instantiate(await wat(text));
    expect((plain.get as () => number)()).toBe(42);
    const { result, exports } = await load(text);
    expect(result.hasStart).toBe(true);
    expect(result.info.startFunction).toBe(0);
    expect((exports.get as () => number)()).toBe(0);
    const start = metered(exports, START_EXPORT);
    expect(start.error).toBeUndefined();
    expect(start.used).toBeGreaterThan(50n * 5n);
    expect((exports.get as () => number)()).toBe(42);
    expect(metered(instantiateSync(result.bytes), START_EXPORT, [], 10n).error).toBeInstanceOf(WebAssembly.RuntimeError);
  });
});

function instantiateSync(bytes: Uint8Array): WebAssembly.Exports {
  return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
}
