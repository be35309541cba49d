// The JSON bounds (ABI-JSON-*) in a real host: a client's input, a guest's output (helix/v1 and
// extism/v1) and a guest's capability request, each too deep, holding a number a double cannot
// keep, or not JSON data at all, end in one envelope with their code; runs end recorded; the host
// serves the next call.
import { describe, expect, it } from 'vitest';
import type { ResponseEnvelope, RunRecord } from '../abi/index.js';
import { readJournal } from '../host/4-calls/broker/journal.js';
import { hostStore } from '../host/5-host/host.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { readAudit } from '../host/3-store/audit.js';
import { bytesInput } from './helpers/bytes-guest-wat.js';
import { aPointer, capabilityRequest, nestedArrays, nestedObjects, okEnvelope, useJsonHost } from './helpers/json-tools.js';

const json = useJsonHost();

const call = (toolId: string, input: unknown): Promise<ResponseEnvelope> => json.host.call({ tool_id: toolId, input });
const send = (toolId: string, bytes: string): Promise<ResponseEnvelope> => call(toolId, bytesInput(bytes));
const run = (r: ResponseEnvelope): RunRecord => getRun(hostStore(json.host), r.run_id!)!;

/** The host still serves: a well-behaved call in the same host succeeds. */
const expectServing = (): Promise<void> => json.expectServing();

/** A guest fault with `code`, recorded as a failed run with that code. */
function expectFailedRun(r: ResponseEnvelope, code: string, pointer?: string): void {
  expect(r).toMatchObject({ status: 'terminal_error', error: { code } });
  if (pointer !== undefined) expect(r.error!.details).toMatchObject({ pointer });
  expect(run(r)).toMatchObject({ status: 'failed', result: { error: { code } } });
}

describe('a client input (ABI-JSON-001, -003, -005)', () => {
  it('nested 1,600 levels deep is I-REQ-JSON-DEPTH naming where, and starts no run (ABI-JSON-001)', async () => {
    const r = await call('j.echo', JSON.parse(nestedObjects(1600)));
    expect(r).toMatchObject({
      status: 'invalid_request',
      run_id: null,
      error: { code: 'I-REQ-JSON-DEPTH', details: { pointer: aPointer('/input', 64), max_depth: 64 } },
    });
    expect(r.error!.message).toContain('deeper than 64 levels');
    await expectServing();
  });

  it('nested 100,000 levels deep as an in-process object is refused the same way (ABI-JSON-001)', async () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i += 1) deep = { a: deep };
    const r = await call('j.echo', deep);
    expect(r).toMatchObject({
      status: 'invalid_request',
      error: { code: 'I-REQ-JSON-DEPTH', details: { pointer: aPointer('/input', 64) } },
    });
    await expectServing();
  });

  it('of exactly 64 levels runs, and its output of 64 levels comes back (ABI-JSON-001)', async () => {
    const input = JSON.parse(nestedObjects(64));
    const r = await call('j.echo', input);
    expect(r).toMatchObject({ status: 'success', output: input });
  });

  it('holding 1e400 or NaN is I-REQ-JSON-NUMBER at its pointer (ABI-JSON-003)', async () => {
    const inf = await call('j.echo', JSON.parse('{"x":[1,1e400]}'));
    expect(inf).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-JSON-NUMBER', details: { pointer: '/input/x/1' } } });
    expect(inf.error!.message).toMatch(/^At \/input\/x\/1, the request has the number Infinity, which is not finite\.$/);
    const nan = await call('j.echo', { y: Number.NaN });
    expect(nan).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-JSON-NUMBER', details: { pointer: '/input/y' } } });
    await expectServing();
  });

  it('with 9007199254740993 and with 9007199254740992 are both refused, so they never share a run (ABI-JSON-003)', async () => {
    const a = await call('j.echo', JSON.parse('{"n":9007199254740993}'));
    const b = await call('j.echo', JSON.parse('{"n":9007199254740992}'));
    for (const r of [a, b])
      expect(r).toMatchObject({
        status: 'invalid_request',
        run_id: null,
        error: { code: 'I-REQ-JSON-NUMBER', details: { pointer: '/input/n' } },
      });
    const largest = await call('j.echo', { n: 9007199254740991 });
    const below = await call('j.echo', { n: 9007199254740990 });
    expect(largest).toMatchObject({ status: 'success', output: { n: 9007199254740991 } });
    expect(below.run_id).not.toBe(largest.run_id);
  });

  it('with a member named __proto__ or a lone surrogate is I-REQ-JSON-VALUE (ABI-JSON-004)', async () => {
    const proto = await call('j.echo', JSON.parse('{"ok":1,"__proto__":{"x":1}}'));
    expect(proto).toMatchObject({
      status: 'invalid_request',
      error: { code: 'I-REQ-JSON-VALUE', details: { pointer: '/input/__proto__' } },
    });
    const lone = await call('j.echo', { s: ['fine', 'bad \ud800'] });
    expect(lone).toMatchObject({
      status: 'invalid_request',
      error: { code: 'I-REQ-JSON-VALUE', details: { pointer: '/input/s/1', problem: 'string' } },
    });
    await expectServing();
  });

  it('that is not JSON data never makes host.call throw: each is I-REQ-JSON-VALUE naming where (ABI-JSON-005)', async () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const shared: unknown[] = [];
    let bomb: unknown = shared;
    for (let i = 0; i < 60; i += 1) bomb = [bomb, bomb];
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    const cases: Array<[unknown, string, RegExp]> = [
      [
        {
          get boom() {
            throw new Error('no reading me');
          },
        },
        '/input/boom',
        /a getter or setter/,
      ],
      [
        new Proxy(
          {},
          {
            ownKeys: () => {
              throw new Error('trap');
            },
          },
        ),
        '/input',
        /a Proxy/,
      ],
      [revocable.proxy, '/input', /a Proxy/],
      [cyclic, '/input/self', /a cycle back to \/input/],
      [{ bomb }, `/input/bomb${'/0'.repeat(59)}/1`, /an object also found at \/input\/bomb(\/0){60},/],
      [{ big: 10n }, '/input/big', /a BigInt/],
      [{ u: undefined }, '/input/u', /undefined/],
      [{ f: () => 1 }, '/input/f', /a function/],
      [{ when: new Date(0) }, '/input/when', /a Date/],
      // biome-ignore lint/suspicious/noSparseArray: the hole is the value under test
      [{ list: [1, , 3] }, '/input/list/1', /a hole in an array/],
      [{ [Symbol('s')]: 1 }, '/input', /symbol-keyed/],
    ];
    for (const [input, pointer, problem] of cases) {
      const r = await call('j.echo', input);
      expect(r, pointer).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-JSON-VALUE', details: { pointer } } });
      expect(r.error!.message).toMatch(problem);
    }
    // The whole request may be hostile too: a Proxy whose every trap throws.
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('get');
        },
        getPrototypeOf: () => {
          throw new Error('proto');
        },
        ownKeys: () => {
          throw new Error('keys');
        },
      },
    );
    expect(await json.host.call(hostile)).toMatchObject({
      status: 'invalid_request',
      error: { code: 'I-REQ-JSON-VALUE', details: { pointer: '' } },
    });
    await expectServing();
  });
});

describe('a guest output (ABI-JSON-001, -002, -003, -004)', () => {
  it('nested 1,600 levels deep ends the run with S-TOOL-OUTPUT-DEPTH, recorded failed (ABI-JSON-002)', async () => {
    expectFailedRun(await send('j.out', okEnvelope(nestedObjects(1600))), 'S-TOOL-OUTPUT-DEPTH', aPointer('/output', 64));
    await expectServing();
  });

  it('nested 100,000 levels deep is the same fault, not a lost worker (ABI-JSON-002)', async () => {
    expectFailedRun(
      await send('j.out', okEnvelope(`{"v":${nestedArrays(100_000)}}`)),
      'S-TOOL-OUTPUT-DEPTH',
      `/output/v${'/0'.repeat(63)}`,
    );
    await expectServing();
  });

  it('of exactly 64 levels is accepted (ABI-JSON-001)', async () => {
    const r = await send('j.out', okEnvelope(nestedObjects(64)));
    expect(r).toMatchObject({ status: 'success', output: JSON.parse(nestedObjects(64)) });
  });

  it('holding 1e400 or a u64 beyond 2^53-1 ends the run with S-TOOL-OUTPUT-NUMBER (ABI-JSON-003)', async () => {
    expectFailedRun(await send('j.out', okEnvelope('{"x":1e400}')), 'S-TOOL-OUTPUT-NUMBER', '/output/x');
    const u64 = await send('j.out', okEnvelope('{"id":18446744073709551615}'));
    expectFailedRun(u64, 'S-TOOL-OUTPUT-NUMBER', '/output/id');
    expect(u64.error!.message).toContain('18446744073709551615');
    await expectServing();
  });

  it('with a lone surrogate or a member named __proto__ ends the run with S-TOOL-OUTPUT-VALUE (ABI-JSON-004)', async () => {
    expectFailedRun(await send('j.out', okEnvelope('{"s":"\\udc00"}')), 'S-TOOL-OUTPUT-VALUE', '/output/s');
    expectFailedRun(await send('j.out', okEnvelope('{"__proto__":{}}')), 'S-TOOL-OUTPUT-VALUE', '/output/__proto__');
    await expectServing();
  });

  it('in an error envelope is bounded the same way (ABI-JSON-002)', async () => {
    const deepError = `{"status":"error","error":{"code":"D-DATA-X","message":"m","details":${nestedObjects(2000)}}}`;
    expectFailedRun(await send('j.out', deepError), 'S-TOOL-OUTPUT-DEPTH', aPointer('/error/details', 63));
    await expectServing();
  });

  it('of an extism/v1 plugin, as output or as its JSON error, is bounded the same way (ABI-JSON-002, -003)', async () => {
    expectFailedRun(await send('j.x_out', nestedObjects(1600)), 'S-TOOL-OUTPUT-DEPTH', aPointer('', 64));
    expectFailedRun(await send('j.x_out', '{"n":9007199254740993}'), 'S-TOOL-OUTPUT-NUMBER', '/n');
    expectFailedRun(
      await send('j.x_err', `{"code":"D-DATA-X","message":"m","details":${nestedObjects(20_000)}}`),
      'S-TOOL-OUTPUT-DEPTH',
      aPointer('/details', 63),
    );
    const fine = await send('j.x_out', nestedObjects(64));
    expect(fine).toMatchObject({ status: 'success', output: JSON.parse(nestedObjects(64)) });
    await expectServing();
  });
});

describe('a capability request (ABI-JSON-001, -006)', () => {
  it('nested 1,600 levels deep, to a forbidden capability with an empty allowlist, ends the run with S-TOOL-CAPABILITY-DEPTH (ABI-JSON-006)', async () => {
    const r = await send('j.req', capabilityRequest('kv.put', nestedObjects(1600)));
    expectFailedRun(r, 'S-TOOL-CAPABILITY-DEPTH', aPointer('/args', 64));
    const journal = readJournal(hostStore(json.host), r.run_id!);
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ outcome: 'abort', name: null, args: null, error: { code: 'S-TOOL-CAPABILITY-DEPTH' } });
    expect(
      readAudit(hostStore(json.host))
        .filter((a) => a.run_id === r.run_id)
        .map((a) => a.decision),
    ).toEqual(['aborted']);
    await expectServing();
  });

  it('nested 100,000 levels deep ends the same way, for helix/v1 and extism/v1 (ABI-JSON-006)', async () => {
    expectFailedRun(
      await send('j.req', capabilityRequest('kv.put', nestedArrays(100_000))),
      'S-TOOL-CAPABILITY-DEPTH',
      `/args${'/0'.repeat(64)}`,
    );
    expectFailedRun(
      await send('j.x_req', capabilityRequest('kv.put', nestedObjects(1600))),
      'S-TOOL-CAPABILITY-DEPTH',
      aPointer('/args', 64),
    );
    await expectServing();
  });

  it('with 1e400 or an unsafe integer in its args is answered I-REQ-CAPABILITY-ARGS, and the guest goes on (ABI-JSON-006)', async () => {
    for (const value of ['1e400', '9007199254740993', '"\\ud800"']) {
      const r = await send('j.kv', capabilityRequest('kv.put', `{"key":"k","value":{"v":${value}}}`));
      expect(r).toMatchObject({
        status: 'success',
        output: {
          answer: {
            status: 'error',
            error: { code: 'I-REQ-CAPABILITY-ARGS', details: { pointer: '/args/value/v', violations: [{ path: '/value/v' }] } },
          },
        },
      });
      expect(readJournal(hostStore(json.host), r.run_id!)[0]).toMatchObject({ outcome: 'error', args: null });
    }
    const outside = await send('j.kv', '{"abi_version":1e400,"name":"kv.get","args":{"key":"k"}}');
    expect(outside).toMatchObject({
      status: 'success',
      output: { answer: { error: { code: 'I-REQ-ENVELOPE', details: { pointer: '/abi_version' } } } },
    });
    const stored = await send('j.kv', capabilityRequest('kv.put', '{"key":"k","value":{"v":9007199254740991}}'));
    expect(stored).toMatchObject({ status: 'success', output: { answer: { status: 'ok' } } });
    await expectServing();
  });
});
