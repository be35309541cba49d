// Module records (ABI-STORE-022): a damaged record is rebuilt at host start from the module being
// loaded, with one audit record naming the digest and the damage, however many tools share it.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { asBinary } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { readAudit } from './audit.js';
import { readModuleRecord, recordModules, type ModuleToRecord } from './modules.js';
import { openStore, type Store } from './open-store.js';
import { rawDatabases } from './raw-access.js';

let t: { dir: string; cleanup: () => void };
let store: Store;
beforeEach(() => {
  t = tempDir('helix-modules-');
  store = openStore(path.join(t.dir, 'home'));
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const tool = (id: string): ModuleToRecord => ({
  manifest: { digest, abi: 'helix/v1', id, version: '1.0.0' },
  module: { bytes, info: { exports: [], imports: [], features: [] }, instrumented: { sha256: '0'.repeat(64), recyclable: true } },
  limits: { maxMemoryPages: 16 },
});

describe('recordModules', () => {
  it('rebuilds a damaged module record shared by several tools with one audit record naming the digest and the damage', async () => {
    await recordModules(store, [tool('a.one'), tool('a.two')], 1_000);
    expect(readModuleRecord(store, digest)?.tools).toEqual(['a.one@1.0.0', 'a.two@1.0.0']);
    // MessagePack that cannot be decoded: a string header announcing 25 bytes, followed by 3.
    await rawDatabases(store).modules.put(digest, asBinary(Buffer.from([0xd9, 0x19, 0x61, 0x62, 0x63])) as never);
    await recordModules(store, [tool('a.one'), tool('a.two'), tool('a.three')], 2_000);
    expect(readModuleRecord(store, digest)).toMatchObject({
      digest,
      first_loaded_at: 2_000,
      tools: ['a.one@1.0.0', 'a.three@1.0.0', 'a.two@1.0.0'],
    });
    const rebuilt = readAudit(store).filter((a) => a.kind === 'store.module_record_rebuilt');
    expect(rebuilt).toHaveLength(1);
    expect(rebuilt[0]).toMatchObject({ digest, code: 'D-DATA-RECORD-INVALID', problem: expect.stringMatching(/cannot be decoded/) });
  });
});
