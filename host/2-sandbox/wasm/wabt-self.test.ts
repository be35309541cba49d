// End-to-end test on a large real module: wabt's own Emscripten-built WebAssembly (about 600
// KB, 1,300 functions) is instrumented while it loads, then the instrumented wabt must
// assemble WAT to the very bytes the original wabt produces.

import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import { decodeModule, FUEL_EXPORT, instrumentModule } from './index.js';

describe('instrumentModule on wabt itself', () => {
  it('instrumentModule keeps a 600 KB Emscripten module working: instrumented wabt assembles WAT identically', async () => {
    const plain = await wabtInit();
    const instantiate = WebAssembly.instantiate;
    let fuel: WebAssembly.Global | undefined;
    let functions = 0;
    // Emscripten's loader calls WebAssembly.instantiate(bytes, imports); swap in the rewrite.
    const patched = async (source: BufferSource, imports?: WebAssembly.Imports) => {
      const bytes = new Uint8Array(
        ArrayBuffer.isView(source) ? source.buffer.slice(source.byteOffset, source.byteOffset + source.byteLength) : source,
      );
      functions = decodeModule(bytes).functionCount;
      const out = instrumentModule(bytes, { maxMemoryPages: 32768 });
      expect(WebAssembly.validate(out.bytes)).toBe(true);
      const result = await instantiate(out.bytes, imports);
      fuel = result.instance.exports[FUEL_EXPORT] as WebAssembly.Global;
      fuel.value = 1n << 62n;
      return result;
    };
    (WebAssembly as { instantiate: unknown }).instantiate = patched;
    let metered: Awaited<ReturnType<typeof wabtInit>>;
    try {
      metered = await wabtInit();
    } finally {
      (WebAssembly as { instantiate: unknown }).instantiate = instantiate;
    }
    expect(functions).toBeGreaterThan(1000);
    const text = `(module (memory 1) (func (export "f") (param i32) (result i32)
      (local i32) (loop $l (local.set 1 (i32.add (local.get 1) (local.get 0))) (br_if $l (i32.lt_u (local.get 1) (i32.const 100)))) (local.get 1)))`;
    const assemble = (w: typeof plain) => {
      const m = w.parseWat('t.wat', text, {});
      try {
        return Buffer.from(m.toBinary({}).buffer).toString('hex');
      } finally {
        m.destroy();
      }
    };
    const before = fuel!.value as bigint;
    expect(assemble(metered)).toBe(assemble(plain));
    const spent = before - (fuel!.value as bigint);
    expect(spent).toBeGreaterThan(10_000n);
  }, 60_000);
});
