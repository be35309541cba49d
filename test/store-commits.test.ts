// How many durable commits the hot paths cost, counted on the store file's meta pages: a run's
// capability calls and their audit records commit once, with the run (ABI-STORE-037), and a host
// start that changes nothing commits nothing. Real modules, real LMDB, real workers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostStore } from '../host/5-host/host.js';
import { createHost } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { readAudit } from '../host/3-store/audit.js';
import { newestCommitIn } from '../host/3-store/header.js';
import { readModuleRecord } from '../host/3-store/modules.js';
import { stormGuest } from './helpers/catching-guests.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const CALLS = 40;
const HOUR = 60 * 60 * 1000;
let plugins: { dir: string; cleanup: () => void };

beforeAll(async () => {
  plugins = await toolpacksDir([
    {
      id: 'c.storm',
      module: stormGuest(CALLS),
      manifest: {
        limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e9, maxCapabilityCalls: CALLS },
        capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
      },
      outputSchema: { type: 'object' },
    },
  ]);
}, 60_000);
afterAll(() => plugins?.cleanup());

describe('durable commits', () => {
  it(`records a run of ${CALLS} capability calls, its journal and its audit records in one commit (ABI-STORE-037)`, async () => {
    const home = tempDir('helix-commits-');
    const host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, policy: loadPolicy(undefined) });
    try {
      const file = host.storePath;
      // The first call of a module in a store also writes its load cache entry (ABI-LOAD-008).
      expect((await host.call({ tool_id: 'c.storm', input: { warm: true } })).status).toBe('success');
      await hostStore(host).flushed();
      const before = newestCommitIn(file);
      const r = await host.call({ tool_id: 'c.storm', input: {} });
      expect(r.status).toBe('success');
      await hostStore(host).flushed();
      // The run ends within 200 ms, so its start and end share one commit (ABI-STORE-034).
      expect(newestCommitIn(file) - before).toBe(1);
      const audit = readAudit(hostStore(host)).filter((a) => a.run_id === r.run_id && a.kind === 'capability');
      expect(audit).toHaveLength(CALLS);
      expect(new Set(audit.map((a) => a.decision))).toEqual(new Set(['allowed']));
    } finally {
      await host.close();
      home.cleanup();
    }
  }, 60_000);

  it('commits nothing when a host starts on a store whose module records are current, and refreshes them after an hour', async () => {
    const home = tempDir('helix-commits-');
    const t0 = Date.now();
    const start = async (at: number): Promise<{ commits: number; lastLoaded: number | undefined }> => {
      const host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, policy: loadPolicy(undefined), now: () => at });
      const file = host.storePath;
      const digest = host.tools().find((t) => t.id === 'c.storm')?.moduleDigest;
      const record = digest === undefined || digest === null ? undefined : readModuleRecord(hostStore(host), digest);
      await host.close();
      return { commits: newestCommitIn(file), lastLoaded: record?.last_loaded_at };
    };
    try {
      const first = await start(t0);
      expect(first.lastLoaded).toBe(t0);
      const again = await start(t0 + 60_000);
      expect(again.commits).toBe(first.commits);
      expect(again.lastLoaded).toBe(t0);
      const later = await start(t0 + 2 * HOUR);
      expect(later.commits).toBeGreaterThan(again.commits);
      expect(later.lastLoaded).toBe(t0 + 2 * HOUR);
    } finally {
      home.cleanup();
    }
  }, 60_000);
});
