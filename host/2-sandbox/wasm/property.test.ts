// Property test: randomly generated structured programs (nested blocks, bounded loops, ifs,
// arithmetic, locals, calls, memory and bulk operations) compute the same results and leave
// the same memory instrumented as not, and the instrumented module always validates.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instrumentModule } from './index.js';
import { instantiate, metered, wat } from '../../../test/helpers/wasm.js';

const FUNCS = 3;
const binops = ['add', 'sub', 'mul', 'xor', 'and', 'or', 'shl', 'shr_u', 'rotl', 'lt_u', 'eq'];

/** An i32 expression in function `fn`; calls only go to later functions, so programs end. */
function expr(fn: number, depth: number): fc.Arbitrary<string> {
  const leaves = fc.oneof(
    fc.integer({ min: -1000, max: 1000 }).map((n) => `(i32.const ${n})`),
    fc.constantFrom('(local.get 0)', '(local.get 1)', '(local.get 2)', '(local.get 3)', '(global.get $g)'),
  );
  if (depth <= 0) return leaves;
  const sub = expr(fn, depth - 1);
  const options: fc.Arbitrary<string>[] = [
    leaves,
    fc.tuple(fc.constantFrom(...binops), sub, sub).map(([op, a, b]) => `(i32.${op} ${a} ${b})`),
    sub.map((a) => `(i32.load (i32.and ${a} (i32.const 0xfff8)))`),
    fc.tuple(sub, sub, sub).map(([a, b, c]) => `(select ${a} ${b} ${c})`),
    fc.tuple(sub, sub).map(([a, b]) => `(if (result i32) ${a} (then ${b}) (else (i32.const 7)))`),
  ];
  if (fn < FUNCS - 1) {
    options.push(fc.tuple(fc.integer({ min: fn + 1, max: FUNCS - 1 }), sub, sub).map(([f, a, b]) => `(call $f${f} ${a} ${b})`));
  }
  return fc.oneof(...options);
}

/** A statement at loop nesting `loops` (which picks the counter local) and block depth `depth`. */
function stmt(fn: number, depth: number, loops: number): fc.Arbitrary<string> {
  const e = expr(fn, 2);
  const simple = fc.oneof(
    fc.tuple(fc.constantFrom(2, 3), e).map(([l, v]) => `(local.set ${l} ${v})`),
    fc.tuple(e, e).map(([a, v]) => `(i32.store (i32.and ${a} (i32.const 0xfff8)) ${v})`),
    e.map((v) => `(global.set $g ${v})`),
    e.map((v) => `(if (i32.eqz (i32.and ${v} (i32.const 7))) (then (return ${v})))`),
    e.map((v) => `(drop (block (result i32) (drop (br_if 0 (i32.const 99) (i32.eq ${v} (i32.const 3)))) (i32.const 5)))`),
    e.map((v) => `(if (i32.eq ${v} (i32.const 777)) (then unreachable))`),
    fc.tuple(e, e, e).map(([d, v, n]) => `(memory.fill (i32.and ${d} (i32.const 0x7f00)) ${v} (i32.and ${n} (i32.const 0xff)))`),
    fc
      .tuple(e, e, e)
      .map(
        ([d, s, n]) => `(memory.copy (i32.and ${d} (i32.const 0x7f00)) (i32.and ${s} (i32.const 0x7f00)) (i32.and ${n} (i32.const 0xff)))`,
      ),
  );
  if (depth <= 0) return simple;
  const body = fc.array(stmt(fn, depth - 1, loops), { maxLength: 3 }).map((s) => s.join(' '));
  const nested: fc.Arbitrary<string>[] = [
    simple,
    fc.tuple(e, body, body).map(([c, t, f]) => `(if ${c} (then ${t}) (else ${f}))`),
    fc.tuple(body, e, body).map(([a, c, b]) => `(block $b${depth} ${a} (br_if $b${depth} ${c}) ${b})`),
  ];
  if (loops < 2) {
    const inner = fc.array(stmt(fn, depth - 1, loops + 1), { maxLength: 3 }).map((s) => s.join(' '));
    const counter = 4 + loops;
    nested.push(
      fc
        .tuple(fc.integer({ min: 1, max: 4 }), inner)
        .map(
          ([n, b]) =>
            `(local.set ${counter} (i32.const ${n})) (loop $l${depth} ${b} ` +
            `(local.set ${counter} (i32.sub (local.get ${counter}) (i32.const 1))) (br_if $l${depth} (local.get ${counter})))`,
        ),
    );
  }
  return fc.oneof(...nested);
}

function func(fn: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.array(stmt(fn, 2, 0), { minLength: 1, maxLength: 4 }), expr(fn, 2))
    .map(
      ([body, result]) =>
        `(func $f${fn} (export "f${fn}") (param i32 i32) (result i32) (local i32 i32 i32 i32) ${body.join(' ')} ${result})`,
    );
}

const program = fc
  .tuple(...Array.from({ length: FUNCS }, (_, i) => func(i)))
  .map((fs) => `(module (memory (export "memory") 1) (global $g (mut i32) (i32.const 3)) ${fs.join('\n')})`);

async function run(bytes: Uint8Array, args: [number, number], instrumented: boolean) {
  const exports = await instantiate(bytes);
  const outcome = instrumented ? metered(exports, 'f0', args) : call(exports, args);
  const memory = new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
  return { result: outcome.result, trap: outcome.error?.message, used: outcome.used, memory: Buffer.from(memory).toString('base64') };
}

function call(exports: WebAssembly.Exports, args: [number, number]) {
  try {
    return { result: (exports.f0 as (a: number, b: number) => number)(...args), used: 0n };
  } catch (error) {
    return { error: error as Error, used: 0n };
  }
}

describe('instrumentModule on random programs', () => {
  it('instrumentModule preserves results and memory of random structured programs and always validates', async () => {
    await fc.assert(
      fc.asyncProperty(program, fc.tuple(fc.integer(), fc.integer()), async (text, args) => {
        const original = await wat(text);
        const out = instrumentModule(original, { maxMemoryPages: 4 });
        expect(WebAssembly.validate(out.bytes)).toBe(true);
        const want = await run(original, args, false);
        const got = await run(out.bytes, args, true);
        expect(got.result).toBe(want.result);
        expect(got.trap).toBe(want.trap);
        expect(got.memory).toBe(want.memory);
        expect(got.used).toBeGreaterThan(0n);
        expect((await run(out.bytes, args, true)).used).toBe(got.used);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
