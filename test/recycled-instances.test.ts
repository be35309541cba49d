// Instances a worker keeps for recycling, through the real host (ABI-ALLOC-008): a client that
// asks for a different memory_mb_limit on every call gets a compiled variant per cap, but each
// worker keeps one instance (and its memory snapshot) per module, so the host's memory stays
// bounded; measured with process.memoryUsage around the calls.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHost, type Host } from '../host/index.js';
import { echoModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

/** 16 MiB of initial memory: a kept instance costs that, and as much again for its snapshot. */
const PAGES = 256;
const CAPS = 40;
const home = tempDir('helix-home-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;
beforeAll(async () => {
  const module = echoModule().replace('(memory (export "memory") 1)', `(memory (export "memory") ${PAGES})`);
  plugins = await toolpacksDir([
    { id: 'r.echo', module, manifest: { limits: { maxInputBytes: 1024, maxOutputBytes: 1024, fuel: 1_000_000, maxMemoryPages: 65_536 } } },
  ]);
  const policyFile = path.join(home.dir, 'policy.yaml');
  writeFileSync(policyFile, 'version: 1\ntools:\n  allow: ["*"]\nceilings:\n  maxMemoryPages: 65536\n');
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, policyFile });
}, 60_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

it('a worker keeps one recyclable instance per module, however many memory caps the calls ask for (ABI-ALLOC-008)', async () => {
  const call = async (i: number, mb: number) => host.call({ tool_id: 'r.echo', input: { i }, constraints: { memory_mb_limit: mb } });
  expect((await call(-1, 16)).status).toBe('success');
  const before = process.memoryUsage().rss;
  for (let i = 0; i < CAPS; i++) expect((await call(i, 17 + i)).output).toEqual({ i });
  const grown = (process.memoryUsage().rss - before) / 2 ** 20;
  console.log(`${CAPS} calls under distinct memory caps, ${PAGES}-page module: rss +${grown.toFixed(0)} MiB`);
  // One kept instance per cap would be 32 MiB each, about 1.3 GiB here.
  expect(grown).toBeLessThan(512);
  expect((await call(CAPS, 16)).output).toEqual({ i: CAPS });
}, 300_000);
