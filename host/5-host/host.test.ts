// createHost's options under their names and their former names: toolpacksDir, and pluginsDir,
// which embedders written before the rename still pass.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedOutputModule } from '../../test/helpers/guest-wat.js';
import { tempDir, toolpacksDir } from '../../test/helpers/toolpack.js';
import { bundledToolpacksDir } from '../1-base/paths.js';
import { createHost } from './host.js';

let packs: { dir: string; cleanup: () => void };
const homes = tempDir('helix-host-options-');

beforeAll(async () => {
  packs = await toolpacksDir([{ id: 'opt.fixed', module: fixedOutputModule('{"status":"ok","output":{"n":1}}') }]);
});
afterAll(() => {
  packs.cleanup();
  homes.cleanup();
});

/** The toolpack ids a host over `options` serves, and the directory it says it loaded them from. */
async function served(
  options: Parameters<typeof createHost>[0],
  home: string,
): Promise<{ ids: string[]; toolpacksDir: string; pluginsDir: string }> {
  const host = await createHost({ ...options, home: path.join(homes.dir, home) });
  try {
    const ids = host
      .tools()
      .filter((t) => t.kind === 'wasm')
      .map((t) => t.id);
    return { ids, toolpacksDir: host.toolpacksDir, pluginsDir: host.pluginsDir };
  } finally {
    await host.close();
  }
}

describe('createHost', () => {
  it('loads the toolpacks of toolpacksDir, and names that directory as toolpacksDir and as pluginsDir', async () => {
    expect(await served({ toolpacksDir: packs.dir }, 'new')).toEqual({
      ids: ['opt.fixed'],
      toolpacksDir: packs.dir,
      pluginsDir: packs.dir,
    });
  });

  it('takes pluginsDir, the former name of toolpacksDir, when toolpacksDir is not given', async () => {
    expect(await served({ pluginsDir: packs.dir }, 'old')).toEqual({ ids: ['opt.fixed'], toolpacksDir: packs.dir, pluginsDir: packs.dir });
    expect((await served({ toolpacksDir: packs.dir, pluginsDir: bundledToolpacksDir() }, 'both')).ids).toEqual(['opt.fixed']);
  });

  it('loads the bundled toolpacks when given neither', async () => {
    const bundled = await served({}, 'bundled');
    expect(bundled.toolpacksDir).toBe(bundledToolpacksDir());
    expect(bundled.ids).toContain('seq.gc_content');
  });
});
