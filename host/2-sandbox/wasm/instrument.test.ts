// Tests of instrumentModule's module-level rewriting: the memory cap, the exports it adds,
// the recyclable verdict, and copying of the sections it does not need to change.

import { describe, expect, it } from 'vitest';
import { decodeModule, FUEL_EXPORT, instrumentModule, MemoryCapError, START_EXPORT } from './index.js';
import { binary, instantiate, metered, section, wat } from '../../../test/helpers/wasm.js';

const cap = (bytes: Uint8Array, pages: number) => instrumentModule(bytes, { maxMemoryPages: pages });

describe('instrumentModule memory cap', () => {
  it('instrumentModule shares the cap among all defined memories, so their maxima add up to at most the cap (ABI-ALLOC-004)', async () => {
    const bytes = await wat('(module (memory 2 100) (memory 2) (memory 2 5))');
    const out = cap(bytes, 10);
    // 6 pages start, 4 to share: the memory that wants least (3 more) gets an even share first.
    expect(decodeModule(out.bytes).memories.map((m) => m.maximum)).toEqual([3, 4, 3]);
    expect(out.info.memories.map((m) => m.maximum)).toEqual([100, null, 5]);
  });

  it('instrumentModule gives a single memory the whole cap, or its declared maximum when smaller (ABI-MEMORY-002)', async () => {
    expect(decodeModule(cap(await wat('(module (memory 2))'), 10).bytes).memories[0]!.maximum).toBe(10);
    expect(decodeModule(cap(await wat('(module (memory 2 5))'), 10).bytes).memories[0]!.maximum).toBe(5);
    expect(decodeModule(cap(await wat('(module (memory 1 1 shared))'), 10).bytes).memories[0]).toMatchObject({ maximum: 1, shared: true });
  });

  it('instrumentModule refuses memories whose initial sizes together are over the cap, naming the memory and the total (ABI-ALLOC-004)', async () => {
    const bytes = await wat('(module (memory 6) (memory 5))');
    expect(() => cap(bytes, 10)).toThrowError(
      expect.objectContaining({ name: 'MemoryCapError', memoryIndex: 1, initial: 5, total: 11, cap: 10 }),
    );
    expect(() => cap(bytes, 11)).not.toThrow();
  });

  it('instrumentModule refuses a defined memory whose initial size is over the cap', async () => {
    const bytes = await wat('(module (import "env" "m" (memory 1)) (memory 20))');
    let error: unknown;
    try {
      cap(bytes, 10);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MemoryCapError);
    expect(error).toMatchObject({ name: 'MemoryCapError', initial: 20, cap: 10, memoryIndex: 1 });
  });

  it('instrumentModule leaves imported memories as declared', async () => {
    const out = cap(await wat('(module (import "env" "m" (memory 50)))'), 10);
    expect(decodeModule(out.bytes).memories[0]).toMatchObject({ initial: 50, maximum: null, imported: true });
  });

  it('instrumentModule keeps 32-bit memories within 4 GiB whatever the cap', async () => {
    const out = cap(await wat('(module (memory 1))'), 1 << 20);
    expect(decodeModule(out.bytes).memories[0]!.maximum).toBe(65536);
    expect(WebAssembly.validate(out.bytes)).toBe(true);
  });

  it('instrumentModule makes growth past the cap fail with -1 inside the guest', async () => {
    const out = cap(await wat('(module (memory 1) (func (export "grow") (result i32) (memory.grow (i32.const 1))))'), 3);
    const exports = await instantiate(out.bytes);
    expect([1, 2, 3].map(() => metered(exports, 'grow').result)).toEqual([1, 2, -1]);
  });

  it('instrumentModule rejects a cap that is not a non-negative integer, naming the option', async () => {
    const bytes = await wat('(module)');
    expect(() => cap(bytes, -1)).toThrowError(/options\.maxMemoryPages/);
    expect(() => cap(bytes, 1.5)).toThrowError(/options\.maxMemoryPages/);
  });
});

describe('instrumentModule exports and sections', () => {
  it('instrumentModule exports every mutable defined global by index, and only those', async () => {
    const bytes = await wat(`(module (import "env" "g" (global (mut i32)))
      (global i32 (i32.const 1)) (global $a (mut i32) (i32.const 2)) (global $b (mut f64) (f64.const 3.5))
      (func (export "bump") (global.set $a (i32.add (global.get $a) (i32.const 1)))))`);
    const out = cap(bytes, 1);
    expect(out.globalExports).toEqual(['__helix_g2', '__helix_g3']);
    const exports = await instantiate(out.bytes, { env: { g: new WebAssembly.Global({ value: 'i32', mutable: true }, 0) } });
    const a = exports.__helix_g2 as WebAssembly.Global;
    expect(a.value).toBe(2);
    metered(exports, 'bump');
    expect(a.value).toBe(3);
    a.value = 2;
    expect((exports.__helix_g3 as WebAssembly.Global).value).toBe(3.5);
    expect(decodeModule(out.bytes).exports.map((e) => e.name)).toEqual(['bump', FUEL_EXPORT, '__helix_g2', '__helix_g3']);
  });

  it('instrumentModule adds global and export sections to a module that has none', async () => {
    for (const text of ['(module)', '(module (func))', '(module (memory 1) (func) (data (i32.const 0) "x"))']) {
      const out = cap(await wat(text), 1);
      expect(WebAssembly.validate(out.bytes)).toBe(true);
      expect(decodeModule(out.bytes).exports).toEqual([{ name: FUEL_EXPORT, kind: 'global', index: 0, mutable: true }]);
      expect(out.hasStart).toBe(false);
    }
  });

  it('instrumentModule exports an imported start function too', async () => {
    const out = cap(await wat('(module (import "env" "f" (func $f)) (start $f))'), 1);
    expect(out.hasStart).toBe(true);
    expect(decodeModule(out.bytes).exports.find((e) => e.name === START_EXPORT)).toMatchObject({ kind: 'func', index: 0 });
  });

  it('instrumentModule copies custom, data, type and element sections byte for byte', async () => {
    const original = await wat(`(module (type (func (param i32))) (table 1 funcref) (memory 1)
      (func $f (param i32)) (elem (i32.const 0) $f) (data (i32.const 8) "payload"))`);
    const custom = section(0, [4, ...Buffer.from('note'), 1, 2, 3]);
    const bytes = new Uint8Array([...original, ...custom]);
    const out = cap(bytes, 1);
    const contains = (needle: Uint8Array) => Buffer.from(out.bytes).indexOf(Buffer.from(needle)) >= 0;
    expect(contains(Uint8Array.from(custom))).toBe(true);
    for (const id of [1, 9, 11]) {
      const at = sectionRange(bytes, id);
      expect(contains(bytes.subarray(at[0], at[1]))).toBe(true);
    }
  });
});

/** [start, end) of the section with `id`, found by walking the section headers. */
function sectionRange(bytes: Uint8Array, id: number): [number, number] {
  let pos = 8;
  while (pos < bytes.length) {
    const start = pos;
    const sid = bytes[pos++]!;
    let size = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[pos++]!;
      size |= (b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    pos += size;
    if (sid === id) return [start, pos];
  }
  throw new Error(`no section ${id}`);
}

describe('instrumentModule recyclable verdict', () => {
  const plain = `(module (memory (export "memory") 1) (global $g (mut i32) (i32.const 0)) (table 2 funcref)
    (elem (i32.const 0) $f) (data (i32.const 0) "x")
    (func $f (result i32) (global.get $g)) (func (export "run") (result i32) (call_indirect (result i32) (i32.const 0))))`;

  it('instrumentModule calls a plain module with memory, globals and a private table recyclable', async () => {
    expect(cap(await wat(plain), 1).recyclable).toBe(true);
  });

  const disqualifiers: [string, string][] = [
    ['table.set', '(module (table 1 funcref) (func (table.set (i32.const 0) (ref.null func))))'],
    ['table.grow', '(module (table 1 funcref) (func (drop (table.grow (ref.null func) (i32.const 1)))))'],
    ['table.fill', '(module (table 1 funcref) (func (table.fill (i32.const 0) (ref.null func) (i32.const 1))))'],
    ['table.copy', '(module (table 2 funcref) (func (table.copy (i32.const 0) (i32.const 1) (i32.const 1))))'],
    ['table.init', '(module (table 1 funcref) (elem $e func $f) (func $f (table.init $e (i32.const 0) (i32.const 0) (i32.const 1))))'],
    ['elem.drop', '(module (elem $e func $f) (func $f (elem.drop $e)))'],
    ['data.drop', '(module (memory 1) (data $d "x") (func (data.drop $d)))'],
    ['a shared memory', '(module (memory 1 1 shared))'],
    ['an imported memory', '(module (import "env" "m" (memory 1)))'],
    ['an imported table', '(module (import "env" "t" (table 1 funcref)))'],
    ['an imported global', '(module (import "env" "g" (global i32)))'],
    ['an exported table', '(module (table (export "t") 1 funcref))'],
    ['a mutable v128 global', '(module (global (mut v128) (v128.const i64x2 0 0)))'],
  ];
  for (const [what, text] of disqualifiers) {
    it(`instrumentModule calls a module with ${what} not recyclable`, async () => {
      const out = cap(await wat(text), 1);
      expect(out.recyclable).toBe(false);
      expect(WebAssembly.validate(out.bytes)).toBe(true);
    });
  }
});

describe('instrumentModule on hand-built inputs', () => {
  it('instrumentModule keeps a memory64 maximum as a 64-bit limit', () => {
    const out = cap(binary(section(5, [1, 0x04, 1])), 8);
    expect(decodeModule(out.bytes).memories[0]).toMatchObject({ initial: 1, maximum: 8, memory64: true });
  });
});
