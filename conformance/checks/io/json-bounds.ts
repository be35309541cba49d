// io checks of the JSON bounds (ABI-JSON-001..007): depth, numbers a double cannot carry, lone
// surrogates and __proto__ members, in input, output and capability arguments alike, through
// host.call and helix call; and values that are not JSON data at all never make host.call throw.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ResponseEnvelope } from '../../../abi/index.js';
import { packageRoot } from '../../../host/1-base/paths.js';
import { CheckFailure, expect, expectSuccess, type Check } from '../../check.js';
import { echoModule } from '../../kit/guest-wat.js';
import { aPointer, bytesInput, nestedArrays, nestedObjects } from '../../kit/io-guests.js';
import { capabilityAuditOf, expectGuestFault, expectRefused, IO_LIMITS, ioPack, journalOf } from '../../kit/io-support.js';
import { BOTH, hasLoneSurrogate, OPEN } from './shared.js';

/** The checks of this file, in the report's order. */
export const jsonBoundChecks: readonly Check[] = [
  {
    id: 'io.json-depth',
    title: 'Input, output and capability args nested 1,600 and 100,000 levels deep are refused at the first breach; 64 levels pass',
    category: 'io',
    abi: ['ABI-JSON-001', 'ABI-JSON-002', 'ABI-JSON-006', 'ABI-JSON-007', 'ABI-RESP-003'],
    engines: BOTH,
    expected:
      'I-REQ-JSON-DEPTH (pointer /input/a…/a of 64 segments, max_depth 64, no run) for deep input; S-TOOL-OUTPUT-DEPTH for deep output and S-TOOL-CAPABILITY-DEPTH (journal: one abort with args null; audit: aborted) for deep args to a forbidden capability; 64 levels of input and output succeed',
    packs: (engine) => [
      ioPack(
        engine,
        'io.bytes',
        engine.guests.bytes('output'),
        { limits: { ...IO_LIMITS, maxInputBytes: 2_000_000, maxOutputBytes: 1_000_000, maxMemoryPages: 128 } },
        { outputSchema: OPEN },
      ),
      ioPack(
        engine,
        'io.req',
        engine.guests.bytes('request'),
        { limits: { ...IO_LIMITS, maxInputBytes: 2_000_000, maxMemoryPages: 128 } },
        { outputSchema: OPEN },
      ),
      ioPack(engine, 'io.echo', engine.guests.echo()),
    ],
    async run(ctx) {
      const deepInput = await ctx.call('io.echo', JSON.parse(nestedObjects(1600)));
      expectRefused(deepInput, 'I-REQ-JSON-DEPTH', { pointer: aPointer('/input', 64), max_depth: 64 });
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 100_000; i++) deep = { a: deep };
      expectRefused(await ctx.call('io.echo', deep), 'I-REQ-JSON-DEPTH', { pointer: aPointer('/input', 64) });
      const at64 = JSON.parse(nestedObjects(64));
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.echo', at64))) === JSON.stringify(at64),
        'an input of 64 levels did not come back',
      );

      const base = ctx.engine.output.at;
      const wrap = ctx.engine.output.answer;
      const out = await ctx.call('io.bytes', bytesInput(wrap(nestedObjects(1600))));
      await expectGuestFault(ctx, out, 'S-TOOL-OUTPUT-DEPTH', { pointer: aPointer(base, 64) });
      const arrays = await ctx.call('io.bytes', bytesInput(wrap(`{"v":${nestedArrays(100_000)}}`)));
      await expectGuestFault(ctx, arrays, 'S-TOOL-OUTPUT-DEPTH', { pointer: `${base}/v${'/0'.repeat(63)}` });
      const ok64 = await ctx.call('io.bytes', bytesInput(wrap(nestedObjects(64))));
      expect(JSON.stringify(expectSuccess(ok64)) === nestedObjects(64), 'an output of 64 levels did not come back');

      const req = await ctx.call('io.req', bytesInput(`{"abi_version":1,"name":"kv.put","args":${nestedObjects(1600)}}`));
      await expectGuestFault(ctx, req, 'S-TOOL-CAPABILITY-DEPTH', { pointer: aPointer('/args', 64) });
      const journal = await journalOf(ctx, req);
      expect(
        journal.length === 1 && journal[0]!.outcome === 'abort' && journal[0]!.args === null,
        `the journal is ${JSON.stringify(journal).slice(0, 400)}`,
      );
      const audit = await capabilityAuditOf(ctx, req);
      expect(audit.length === 1 && audit[0]!.decision === 'aborted', `the audit is ${JSON.stringify(audit).slice(0, 400)}`);
      ctx.observe('capability_depth', req.error);
    },
  },
  {
    id: 'io.json-numbers',
    title: 'Numbers a double cannot carry exactly (1e400, NaN, 2^53, a u64) are refused in input, output and capability args',
    category: 'io',
    abi: ['ABI-JSON-003', 'ABI-JSON-002', 'ABI-JSON-006', 'ABI-JSON-007'],
    engines: BOTH,
    expected:
      'I-REQ-JSON-NUMBER at /input/x/1 for 1e400, at /input/y for NaN, for 9007199254740993 and 9007199254740992; S-TOOL-OUTPUT-NUMBER quoting 18446744073709551615 for a u64 output; I-REQ-CAPABILITY-ARGS (the guest goes on) for 1e400 in kv.put args; 9007199254740991 passes; 0.1 and 0.10 are the same run',
    packs: (engine) => [
      ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN }),
      ioPack(
        engine,
        'io.kv',
        engine.guests.bytes('request'),
        { capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.get'] } },
        { outputSchema: OPEN },
      ),
      ioPack(engine, 'io.echo', engine.guests.echo()),
    ],
    async run(ctx) {
      const inf = await ctx.call('io.echo', JSON.parse('{"x":[1,1e400]}'));
      expectRefused(inf, 'I-REQ-JSON-NUMBER', { pointer: '/input/x/1' });
      expect(
        inf.error!.message.includes('/input/x/1') && inf.error!.message.includes('Infinity'),
        `the message does not say where and what: ${inf.error!.message}`,
      );
      expectRefused(await ctx.call('io.echo', { y: Number.NaN }), 'I-REQ-JSON-NUMBER', { pointer: '/input/y' });
      for (const n of ['9007199254740993', '9007199254740992', '-9007199254740992', '1e20']) {
        const r = await ctx.call('io.echo', JSON.parse(`{"n":${n}}`));
        expectRefused(r, 'I-REQ-JSON-NUMBER', { pointer: '/input/n' });
      }
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.echo', { n: 9007199254740991 }))) === '{"n":9007199254740991}',
        'the largest safe integer did not pass',
      );
      const a = await ctx.call('io.echo', JSON.parse('{"f":0.1}'));
      const b = await ctx.call('io.echo', JSON.parse('{"f":0.10}'));
      expect(a.run_id === b.run_id && b.replayed === true, `0.1 and 0.10 are different runs (${a.run_id}, ${b.run_id})`);

      const wrap = ctx.engine.output.answer;
      const base = ctx.engine.output.at;
      const u64 = await ctx.call('io.bytes', bytesInput(wrap('{"id":18446744073709551615}')));
      await expectGuestFault(ctx, u64, 'S-TOOL-OUTPUT-NUMBER', { pointer: `${base}/id` });
      expect(
        u64.error!.message.includes('18446744073709551615'),
        `the message does not quote the number as written: ${u64.error!.message}`,
      );
      const big = await ctx.call('io.bytes', bytesInput(wrap('{"x":1e400}')));
      await expectGuestFault(ctx, big, 'S-TOOL-OUTPUT-NUMBER', { pointer: `${base}/x` });

      const args = await ctx.call('io.kv', bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":{"v":1e400}}}'));
      const answer = JSON.stringify(expectSuccess(args));
      expect(
        answer.includes('I-REQ-CAPABILITY-ARGS') && answer.includes('/args/value/v'),
        `the guest did not get I-REQ-CAPABILITY-ARGS at /args/value/v: ${answer.slice(0, 400)}`,
      );
      const journal = await journalOf(ctx, args);
      expect(
        journal[0]?.outcome === 'error' && journal[0]?.args === null,
        `the journal keeps the args: ${JSON.stringify(journal).slice(0, 300)}`,
      );
      ctx.observe('u64_output', u64.error);
    },
  },
  {
    id: 'io.json-strings-and-keys',
    title: 'Lone surrogates and __proto__ members are refused everywhere; duplicate keys keep the last; constructor is plain data',
    category: 'io',
    abi: ['ABI-JSON-004', 'ABI-JSON-002', 'ABI-JSON-006', 'ABI-JSON-007'],
    engines: BOTH,
    expected:
      'I-REQ-JSON-VALUE (pointer /input/s/1, problem string; /input/__proto__) for input; S-TOOL-OUTPUT-VALUE (pointer …/s, …/__proto__) for output; I-REQ-CAPABILITY-ARGS for a lone surrogate in args; {"a":1,"a":2} outputs {"a":2}; members named constructor and prototype pass through unchanged',
    packs: (engine) => [
      ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN }),
      ioPack(
        engine,
        'io.kv',
        engine.guests.bytes('request'),
        { capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.get'] } },
        { outputSchema: OPEN },
      ),
      ioPack(engine, 'io.echo', engine.guests.echo()),
    ],
    async run(ctx) {
      const lone = await ctx.call('io.echo', { s: ['fine', 'bad \ud800'] });
      expectRefused(lone, 'I-REQ-JSON-VALUE', { pointer: '/input/s/1', problem: 'string' });
      expectRefused(await ctx.call('io.echo', JSON.parse('{"ok":1,"__proto__":{"x":1}}')), 'I-REQ-JSON-VALUE', {
        pointer: '/input/__proto__',
      });
      expectRefused(await ctx.call('io.echo', JSON.parse('{"deep":{"__proto__":{"polluted":true}}}')), 'I-REQ-JSON-VALUE', {
        pointer: '/input/deep/__proto__',
      });
      expect(({} as Record<string, unknown>).polluted === undefined, 'Object.prototype was polluted');
      const plain = JSON.parse('{"constructor":{"prototype":{"x":1}},"toString":"s","a":1,"a":2}');
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.echo', plain))) === '{"constructor":{"prototype":{"x":1}},"toString":"s","a":2}',
        'constructor/prototype members did not come back as plain data',
      );

      const wrap = ctx.engine.output.answer;
      const base = ctx.engine.output.at;
      const surrogate = await ctx.call('io.bytes', bytesInput(wrap('{"s":"\\udc00"}')));
      await expectGuestFault(ctx, surrogate, 'S-TOOL-OUTPUT-VALUE', { pointer: `${base}/s` });
      const keySurrogate = await ctx.call('io.bytes', bytesInput(wrap('{"k\\ud800":1}')));
      await expectGuestFault(ctx, keySurrogate, 'S-TOOL-OUTPUT-VALUE');
      const proto = await ctx.call('io.bytes', bytesInput(wrap('{"__proto__":{"isAdmin":true}}')));
      await expectGuestFault(ctx, proto, 'S-TOOL-OUTPUT-VALUE', { pointer: `${base}/__proto__` });
      if (ctx.engine.output.enveloped) {
        // An envelope that says error and then ok is ok: the last value of a member given twice.
        const twice = await ctx.call('io.bytes', bytesInput('{"status":"error","status":"ok","output":{"last":true}}'));
        expect(JSON.stringify(expectSuccess(twice)) === '{"last":true}', `a status given twice did not keep the last: ${twice.status}`);
      }
      const dup = await ctx.call('io.bytes', bytesInput(wrap('{"a":1,"a":2,"constructor":{"name":"x"}}')));
      expect(
        JSON.stringify(expectSuccess(dup)) === '{"a":2,"constructor":{"name":"x"}}',
        `duplicate keys did not keep the last: ${JSON.stringify(dup.output)}`,
      );

      const args = await ctx.call('io.kv', bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":{"v":"\\ud800"}}}'));
      const answer = JSON.stringify(expectSuccess(args));
      expect(answer.includes('I-REQ-CAPABILITY-ARGS'), `a lone surrogate in args was not refused: ${answer.slice(0, 300)}`);
      const protoArgs = await ctx.call(
        'io.kv',
        bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":{"__proto__":{"x":1}}}}'),
      );
      const protoAnswer = JSON.stringify(expectSuccess(protoArgs));
      expect(protoAnswer.includes('I-REQ-CAPABILITY-ARGS'), `a __proto__ member in args was not refused: ${protoAnswer.slice(0, 300)}`);
      const dupArgs = await ctx.call(
        'io.kv',
        bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","key":"k2","value":{"constructor":1}}}'),
      );
      expect(
        JSON.stringify(expectSuccess(dupArgs)).includes('"status":"ok"'),
        'kv.put with a duplicate key and a constructor member was not served',
      );
      const got = await ctx.call('io.kv', bytesInput('{"abi_version":1,"name":"kv.get","args":{"key":"k2"}}'));
      expect(
        JSON.stringify(expectSuccess(got)).includes('"constructor":1'),
        `the duplicate key did not keep its last value: ${JSON.stringify(got.output).slice(0, 300)}`,
      );
    },
  },
  {
    id: 'io.cli-json-bounds',
    title:
      'helix call refuses deep, inexact and non-UTF-8 input as one envelope, with pointers and quotes cut to 512 characters and kept Unicode text',
    category: 'io',
    abi: ['ABI-JSON-001', 'ABI-JSON-003', 'ABI-JSON-007'],
    engines: ['helix'],
    expected:
      'exit 2 and exactly one envelope line each: I-REQ-JSON-DEPTH at /input/a…/a (64) for 1,600 levels given as --input text; I-REQ-JSON-NUMBER quoting 9007199254740993 as written, and a 701-digit literal cut with …; I-REQ-JSON for an --input-file that is not UTF-8; for a member name of 600 characters ending in a lone surrogate, a pointer of at most 512 characters ending in "…" and holding no lone surrogate; no stack trace on stderr',
    packs: () => [{ id: 'io.echo', module: echoModule() }],
    async run(ctx) {
      const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
      const plugins = await ctx.toolpacksDir();
      const exec = promisify(execFile);
      let homes = 0;
      const nextHome = (): string => {
        homes += 1;
        return path.join(ctx.env.dir, `cli-home-${homes}`);
      };
      const helixCall = async (source: string[]): Promise<{ code: number; envelope: ResponseEnvelope }> => {
        // A home of its own per process, so the processes can run side by side.
        const home = nextHome();
        const r = await exec(process.execPath, [cli, 'call', 'io.echo', '--toolpacks', plugins, '--home', home, '--compact', ...source], {
          maxBuffer: 64 << 20,
          timeout: 30_000,
        }).then(
          (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => e,
        );
        const lines = r.stdout.trim().split('\n');
        expect(lines.length === 1, `helix call printed ${lines.length} lines: ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`);
        expect(!/\n\s+at /.test(r.stderr), `a stack trace on stderr: ${r.stderr.slice(0, 400)}`);
        return { code: r.code, envelope: JSON.parse(lines[0]!) as ResponseEnvelope };
      };
      const latin1 = path.join(ctx.env.dir, 'latin1.json');
      writeFileSync(latin1, Buffer.from([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]));
      const [deep, number, notUtf8, longName, longValue] = await Promise.all([
        helixCall(['--input', nestedObjects(1600)]),
        helixCall(['--input', '{"n":9007199254740993}']),
        helixCall(['--input-file', latin1]),
        helixCall(['--input', `{"${'k'.repeat(600)}\\ud800":1}`]),
        helixCall(['--input', `{"k":[${'1,'.repeat(10)}1${'0'.repeat(700)}]}`]),
      ]);
      for (const r of [deep, number, notUtf8, longName, longValue]) expect(r.code === 2, `exit ${r.code} for ${r.envelope.error?.code}`);
      expectRefused(deep.envelope, 'I-REQ-JSON-DEPTH', { pointer: aPointer('/input', 64), max_depth: 64 });
      expectRefused(number.envelope, 'I-REQ-JSON-NUMBER', { pointer: '/input/n' });
      expect(
        number.envelope.error!.message.includes('9007199254740993'),
        `the message does not quote the literal as written: ${number.envelope.error!.message}`,
      );
      expectRefused(notUtf8.envelope, 'I-REQ-JSON');
      expectRefused(longName.envelope, 'I-REQ-JSON-VALUE');
      const pointer = String(longName.envelope.error!.details.pointer);
      expect(
        pointer.length <= 512 && pointer.endsWith('…') && !hasLoneSurrogate(longName.envelope.error),
        `the pointer is ${pointer.length} characters: ${JSON.stringify(pointer.slice(-40))}`,
      );
      expectRefused(longValue.envelope, 'I-REQ-JSON-NUMBER', { pointer: '/input/k/10' });
      expect(
        longValue.envelope.error!.message.length < 1400 && longValue.envelope.error!.message.includes('…'),
        `a 701-digit literal is not cut in the message: ${longValue.envelope.error!.message.length} characters`,
      );
      ctx.observe('long_name_pointer_chars', pointer.length);
      ctx.observe('depth', deep.envelope.error);
    },
  },
  {
    id: 'io.not-json-data',
    title: 'host.call never throws for values that are not JSON data: cycles, shared nodes, BigInt, getters, Proxies, holes',
    category: 'io',
    abi: ['ABI-JSON-005', 'ABI-RESP-001'],
    engines: ['helix'],
    expected:
      'invalid_request I-REQ-JSON-VALUE naming the pointer for each; a request that is a Proxy whose every trap throws is I-REQ-JSON-VALUE at ""; host.call resolves every time',
    packs: () => [{ id: 'io.echo', module: echoModule() }],
    async run(ctx) {
      const host = await ctx.host();
      const cyclic: Record<string, unknown> = { name: 'loop' };
      cyclic.self = cyclic;
      let bomb: unknown = [];
      for (let i = 0; i < 60; i += 1) bomb = [bomb, bomb];
      const revocable = Proxy.revocable({}, {});
      revocable.revoke();
      const cases: Array<[string, unknown, string]> = [
        [
          'getter that throws',
          {
            get boom() {
              throw new Error('no reading me');
            },
          },
          '/input/boom',
        ],
        ['revoked Proxy', revocable.proxy, '/input'],
        ['cycle', cyclic, '/input/self'],
        ['2^60 shared nodes', { bomb }, `/input/bomb${'/0'.repeat(59)}/1`],
        ['BigInt', { big: 10n }, '/input/big'],
        ['undefined', { u: undefined }, '/input/u'],
        ['function', { f: () => 1 }, '/input/f'],
        ['Date', { when: new Date(0) }, '/input/when'],
        ['Map', { m: new Map([[1, 2]]) }, '/input/m'],
        ['typed array', { t: new Uint8Array(4) }, '/input/t'],
        // biome-ignore lint/suspicious/noSparseArray: the hole is the value the host must refuse
        ['hole', { list: [1, , 3] }, '/input/list/1'],
        ['symbol key', { [Symbol('s')]: 1 }, '/input'],
      ];
      for (const [label, input, pointer] of cases) {
        let r: ResponseEnvelope;
        try {
          r = await ctx.call('io.echo', input);
        } catch (e) {
          throw new CheckFailure(`${label}: host.call threw ${(e as Error).message}`);
        }
        try {
          expectRefused(r, 'I-REQ-JSON-VALUE', { pointer });
        } catch (e) {
          throw new CheckFailure(`${label}: ${(e as Error).message}`);
        }
        ctx.observe(label, r.error?.message);
      }
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
      const whole = await host.call(hostile);
      expectRefused(whole as never, 'I-REQ-JSON-VALUE', { pointer: '' });
    },
  },
];
