// Tests decodeModule and instrumentModule on a real AssemblyScript module (a SHA-256 compiled
// with -O3 in the test), comparing results with the uninstrumented module.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeModule, instrumentModule } from './index.js';
import { compileAssemblyScript, instantiate, metered } from '../../../test/helpers/wasm.js';

// The fixture and the SDK's SHA-256 it imports, under their repository paths so the import resolves.
const sha256Source = {
  'host/2-sandbox/wasm/assembly/sha256.ts': readFileSync(new URL('./assembly/sha256.ts', import.meta.url), 'utf8'),
  'sdk-guest/assemblyscript/assembly/sha256.ts': readFileSync(
    new URL('../../../sdk-guest/assemblyscript/assembly/sha256.ts', import.meta.url),
    'utf8',
  ),
};

describe('instrumentModule on AssemblyScript output', () => {
  it('instrumentModule keeps an -O3 AssemblyScript SHA-256 computing the same digests', async () => {
    const bytes = await compileAssemblyScript(sha256Source);
    const info = decodeModule(bytes);
    expect(info.exports.map((e) => e.name)).toEqual(expect.arrayContaining(['hash', 'memory']));
    expect(info.codeBytes).toBeGreaterThan(500);
    const out = instrumentModule(bytes, { maxMemoryPages: 16 });
    expect(WebAssembly.validate(out.bytes)).toBe(true);
    const plain = await instantiate(bytes);
    const metered_ = await instantiate(out.bytes);
    const hash = plain.hash as (len: number, rounds: number) => number;
    for (const [len, rounds] of [
      [64, 1],
      [1024, 3],
      [4096, 2],
    ] as const) {
      const run = metered(metered_, 'hash', [len, rounds]);
      expect(run.result).toBe(hash(len, rounds));
      expect(metered(metered_, 'hash', [len, rounds]).used).toBe(run.used);
    }
    const per = (rounds: number) => metered(metered_, 'hash', [1024, rounds]).used;
    expect(per(4) - per(2)).toBe(2n * (per(2) - per(1)));
  }, 60_000);
});
