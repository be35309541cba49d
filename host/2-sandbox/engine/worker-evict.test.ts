// A lane and the real sandbox worker (dist/, as the engine runs it) when the engine gives a
// variant up (ABI-ALLOC-010): the worker drops the module and the instance it kept of it, at once
// when idle, and, when a call is running, after that call and before the next task.
import path from 'node:path';
import { Piscina } from 'piscina';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MODULE_VARIANTS } from '../../../abi/index.js';
import { abiPrelude, echoModule } from '../../../test/helpers/guest-wat.js';
import { wat2wasm } from '../../../test/helpers/wat.js';
import { packageRoot } from '../../1-base/paths.js';
import { instrumentModule, type InstrumentResult } from '../wasm/index.js';
import { Lane } from './lane.js';
import type { BrokerAnswer, CapabilityBroker, ExecuteTask, LaneStart } from './protocol.js';

/** Hands its input (a capability request) to the broker and returns the answer as its output. */
const FORWARD = `(module
  (import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))
  ${abiPrelude()}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (call $cap (local.get $ptr) (local.get $len))))`;
const REQUEST = new TextEncoder().encode('{"abi_version":1,"name":"clock.now_unix","args":{}}');
const ANSWER: BrokerAnswer = { kind: 'answer', response: new TextEncoder().encode('{"status":"ok","output":{"answered":true}}'), fuel: 1 };

const pool = new Piscina<LaneStart, string>({
  filename: path.join(packageRoot(), 'dist', 'host', '2-sandbox', 'engine', 'worker.js'),
  minThreads: 1,
  maxThreads: 1,
  atomics: 'disabled',
});
afterAll(() => pool.destroy());

interface Compiled {
  readonly inst: InstrumentResult;
  readonly module: WebAssembly.Module;
}
let echo: Compiled;
let forward: Compiled;
beforeAll(async () => {
  const compile = async (wat: string): Promise<Compiled> => {
    const inst = instrumentModule(await wat2wasm(wat), { maxMemoryPages: 4 });
    return { inst, module: await WebAssembly.compile(inst.bytes) };
  };
  echo = await compile(echoModule());
  forward = await compile(FORWARD);
});

/** A task running `c` under `key` (digest:cap); echo's instances are recyclable, so the worker keeps one. */
const task = (key: string, c: Compiled, input: Uint8Array = new TextEncoder().encode('{}')): ExecuteTask => ({
  kind: 'execute',
  key,
  recyclable: c.inst.recyclable,
  hasStart: c.inst.hasStart,
  globalExports: c.inst.globalExports,
  entrypoint: 'execute',
  input,
  fuel: 10_000_000,
  maxOutputBytes: 1024,
  maxMemoryPages: 4,
});
const refuse: CapabilityBroker = async () => ({ kind: 'abort', code: 'A-AUTH-FORBIDDEN', message: 'no capabilities here', details: {} });

describe('a worker told to forget a variant (ABI-ALLOC-010)', () => {
  it('drops its module and kept instance at once when idle, and takes the module again when sent', async () => {
    const lane = new Lane(pool, () => undefined);
    try {
      for (const key of ['a:4', 'b:4'])
        expect(await lane.run(task(key, echo), echo.module, refuse)).toMatchObject({ kind: 'reply', reply: { kind: 'output' } });
      expect(await lane.census()).toMatchObject({ modules: ['a:4', 'b:4'], instances: ['a:4', 'b:4'] });
      lane.forget('a:4', 100);
      lane.forget('never-sent:4', 100); // a key the worker never had is not sent
      expect(await lane.census()).toMatchObject({ modules: ['b:4'], instances: ['b:4'] });
      expect(await lane.run(task('a:4', echo), echo.module, refuse)).toMatchObject({
        kind: 'reply',
        reply: { kind: 'output', recycled: false },
      });
      expect(await lane.census()).toMatchObject({ modules: ['b:4', 'a:4'] });
    } finally {
      await lane.shutdown();
    }
  });

  it('drops it after the running call ends and before the next task, which still runs', async () => {
    const lane = new Lane(pool, () => undefined);
    try {
      await lane.run(task('a:4', echo), echo.module, refuse);
      let entered!: () => void;
      const inBroker = new Promise<void>((resolve) => (entered = resolve));
      let answer!: (a: BrokerAnswer) => void;
      const held: CapabilityBroker = () => {
        entered();
        return new Promise((resolve) => (answer = resolve));
      };
      const running = lane.run(task('f:4', forward, REQUEST), forward.module, held);
      await inBroker;
      // The worker waits inside the guest's capability call: the eviction must not reach it now,
      // where it would be read as the broker's answer.
      lane.forget('a:4', 100);
      expect(await lane.census()).toBeUndefined();
      answer(ANSWER);
      expect(await running).toMatchObject({
        kind: 'reply',
        reply: { kind: 'output', output: { status: 'ok', output: { answered: true } } },
      });
      expect((await lane.census())?.modules).toEqual(['f:4']);
      expect(await lane.run(task('a:4', echo), echo.module, refuse)).toMatchObject({ kind: 'reply', reply: { kind: 'output' } });
    } finally {
      await lane.shutdown();
    }
  });

  it('is stale, to be replaced, once told to drop MAX_MODULE_VARIANTS variants', async () => {
    const lane = new Lane(pool, () => undefined);
    try {
      for (let i = 0; i < MAX_MODULE_VARIANTS; i++) {
        await lane.run(task(`k${i}:4`, echo), echo.module, refuse);
        expect(lane.stale).toBe(false);
        lane.forget(`k${i}:4`, 1);
      }
      expect(lane.stale).toBe(true);
      expect((await lane.census())?.modules).toEqual([]);
    } finally {
      await lane.shutdown();
    }
  });
});
