// The replay broker of `helix verify` reports where a re-execution departs from its journal; the
// request it quotes is bounded like any request entering the host (ABI-JSON-006).
import { afterAll, describe, expect, it } from 'vitest';
import { JSON_REPORT_MAX_CHARS, MAX_JSON_DEPTH } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { loadPolicy } from '../policy/load-policy.js';
import { openStore } from '../../3-store/open-store.js';
import { createReplayBroker } from './replay-broker.js';

const home = tempDir('helix-replay-broker-');
const store = openStore(home.dir);
afterAll(async () => {
  await store.close();
  home.cleanup();
});

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('createReplayBroker departures', () => {
  it('createReplayBroker quotes a request past the depth bound as bounded text, never as a parsed value', async () => {
    const broker = createReplayBroker(store, loadPolicy().policy, 'run_x', 'test.tool', []);
    const deep = `{"abi_version":1,"name":"kv.get","args":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const answer = await broker.handle(encode(deep));
    expect(answer.kind).toBe('abort');
    const departure = broker.departure();
    expect(departure?.seq).toBe(0);
    const actual = departure?.actual;
    expect(typeof actual).toBe('string');
    expect((actual as string).length).toBeLessThanOrEqual(JSON_REPORT_MAX_CHARS);
    // The report can be printed and recorded like any other value.
    expect(() => JSON.stringify(departure)).not.toThrow();
  });

  it('createReplayBroker quotes a request within the bounds as its parsed value', async () => {
    const broker = createReplayBroker(store, loadPolicy().policy, 'run_y', 'test.tool', []);
    const nested = `${'['.repeat(MAX_JSON_DEPTH - 2)}1${']'.repeat(MAX_JSON_DEPTH - 2)}`;
    await broker.handle(encode(`{"abi_version":1,"name":"kv.get","args":{"key":${nested}}}`));
    expect(broker.departure()?.actual).toMatchObject({ name: 'kv.get' });
  });
});
