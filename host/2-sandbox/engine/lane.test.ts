import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { Lane } from './lane.js';
import type { ExecuteTask, LaneStart } from './protocol.js';

const pool = new Piscina<LaneStart, string>({
  filename: new URL('../../../test/fixtures/late-notify-worker.mjs', import.meta.url).href,
  minThreads: 1,
  maxThreads: 1,
  atomics: 'disabled',
});
afterAll(() => pool.destroy());

const refuseAll = async () => ({
  kind: 'abort' as const,
  code: 'A-AUTH-FORBIDDEN' as const,
  message: 'no capabilities in this test',
  details: {},
});

const task = (key: string): ExecuteTask =>
  ({
    kind: 'execute',
    key,
    recyclable: false,
    hasStart: false,
    globalExports: [],
    entrypoint: 'execute',
    input: new Uint8Array(),
    fuel: 1,
    maxOutputBytes: 1,
    maxMemoryPages: 1,
  }) as ExecuteTask;

describe('Lane', () => {
  it('does not take a late wake-up from the previous reply for the next reply', async () => {
    const lane = new Lane(pool, () => undefined);
    const module = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    for (let i = 0; i < 30; i++) {
      const outcome = await lane.run(task(`k${i}`), module, refuseAll);
      expect(outcome).toMatchObject({ kind: 'reply', reply: { kind: 'output', output: { output: { key: `k${i}` } } } });
    }
    await lane.shutdown();
    expect(lane.dead).toBe(true);
  });

  it('settles a pending call as lost when the worker is killed, and refuses new work', async () => {
    const lane = new Lane(pool, () => undefined);
    lane.kill();
    await lane.ended;
    const module = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    expect(await lane.run(task('after'), module, refuseAll)).toMatchObject({ kind: 'lost' });
  });
});
