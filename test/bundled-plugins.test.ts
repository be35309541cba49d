// Every bundled toolpack's fixtures, through the real host: the bundled toolpacks do what their
// fixtures say, from the built modules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFixtures } from '../host/6-faces/devloop/run-fixtures.js';
import { createHost, type Host, type WasmTool } from '../host/index.js';
import { tempDir } from './helpers/toolpack.js';

let host: Host;
const home = tempDir('helix-home-');
beforeAll(async () => {
  host = await createHost({ home: home.dir });
});
afterAll(async () => {
  await host?.close();
  home.cleanup();
});

const toolpacks = (): WasmTool[] => host.tools().filter((t): t is WasmTool => t.kind === 'wasm');

describe('bundled toolpacks', () => {
  it('load, and each declares fixtures', () => {
    expect(toolpacks().length).toBeGreaterThan(0);
    for (const t of toolpacks()) expect(t.loaded.manifest.health?.fixtures, t.id).toBeDefined();
  });

  it('pass every fixture', async () => {
    const results = (await Promise.all(toolpacks().map((t) => runFixtures(host, t)))).flat();
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(9);
  });

  it('seq.gc_content agrees with a direct count on random sequences', async () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 20; n++) {
      const seq = Array.from({ length: 1 + Math.floor(rand() * 500) }, () => 'ACGTNacgtn \n'[Math.floor(rand() * 12)]).join('');
      const bases = seq.replace(/\s/g, '').toUpperCase();
      const gc = [...bases].filter((c) => c === 'G' || c === 'C').length;
      const at = [...bases].filter((c) => c === 'A' || c === 'T').length;
      const r = await host.call({ tool_id: 'seq.gc_content', input: { sequence: seq } });
      expect(r.output).toMatchObject({ length: bases.length, gc_count: gc, at_count: at, gc_fraction: gc + at === 0 ? 0 : gc / (gc + at) });
    }
  });
});
