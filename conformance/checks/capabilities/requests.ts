// Capability checks of the requests a guest sends (ABI-CAP-001, ABI-CAP-002, ABI-CAP-005): the JSON
// bounds are checked before the name, malformed envelopes and arguments that break a schema are
// answered with every violation, an oversized payload is refused, and the guest goes on each time.
import { expect, expectOutcome, type Check } from '../../check.js';
import { RAW_LIMITS, rawAnswers, rawInput, sendRequests } from '../../kit/caps-kit.js';
import { CLOCK_CALL, raw } from './shared.js';

/** The checks of this file, in the report's order. */
export const requestChecks: readonly Check[] = [
  {
    id: 'capabilities.json-bounds-before-name',
    title: 'JSON bounds are checked before the name: an unknown and an allowlisted name get the same answer or the same abort',
    category: 'capabilities',
    abi: ['ABI-CAP-002', 'ABI-CAP-001', 'ABI-JSON-006'],
    engines: ['helix'],
    expected:
      'a request carrying the integer 2^53+1 is answered with the same bytes whether it names no.such_thing or the allowlisted kv.get; a request nested 100 deep ends the run S-TOOL-CAPABILITY-DEPTH for either name, the journal keeping the abort with args null',
    packs: () => [raw('cap.raw', ['kv.get', 'clock.now_unix'])],
    async run(ctx) {
      const host = await ctx.host();
      const huge = (name: string) => `{"abi_version":1,"name":"${name}","args":{"key":"k","n":9007199254740993}}`;
      const a = rawAnswers(
        await ctx.call(
          'cap.raw',
          rawInput([
            { request: huge('no.such_thing') },
            { request: huge('kv.get') },
            { request: { abi_version: 1, name: 'clock.now_unix', args: {} } },
          ]),
        ),
      );
      expect(
        Buffer.compare(a[0]!.bytes, a[1]!.bytes) === 0,
        `the answers differ by name: ${a[0]!.text.slice(0, 200)} / ${a[1]!.text.slice(0, 200)}`,
      );
      expect(
        a[0]!.json.status === 'error' && a[0]!.json.error?.code !== 'A-AUTH-FORBIDDEN',
        `an out-of-bounds number was answered ${a[0]!.text.slice(0, 300)}`,
      );
      expect(a[2]!.json.status === 'ok', 'the guest could not go on after the bounds refusal');
      ctx.observe('bounds_answer', a[0]!.text.slice(0, 300));
      const deep = (name: string) => `{"abi_version":1,"name":"${name}","args":{"key":${'['.repeat(100)}${']'.repeat(100)}}}`;
      const codes: Record<string, unknown> = {};
      for (const name of ['no.such_thing', 'kv.get']) {
        const r = await ctx.call(
          'cap.raw',
          rawInput([{ request: deep(name) }, { request: { abi_version: 1, name: 'clock.now_unix', args: {} } }]),
        );
        expectOutcome(r, 'terminal_error', 'S-TOOL-CAPABILITY-DEPTH');
        const journal = host.runs.journal(r.run_id!);
        expect(
          journal.length === 1 && journal[0]!.outcome === 'abort' && journal[0]!.args === null,
          `${name}: the journal keeps ${JSON.stringify(journal.map((e) => [e.name, e.outcome, e.args]))}`,
        );
        codes[name] = r.error!.code;
      }
      ctx.observe('depth_codes', codes);
    },
  },
  {
    id: 'capabilities.malformed-envelope',
    title:
      'Malformed capability requests (not UTF-8, not JSON, wrong shape, bad abi_version) are answered I-REQ-ENVELOPE and the guest goes on',
    category: 'capabilities',
    abi: ['ABI-CAP-001'],
    engines: ['helix', 'extism'],
    expected:
      'each malformed request gets {"status":"error","abi_version":1,"error":{"code":"I-REQ-ENVELOPE"}} in the guest\'s memory; an abi_version 2 request on the text import is answered with abi_version 2; a later well-formed clock.now_unix call is answered ok',
    packs: (engine) => [engine.caller.pack('cap.caller', ['clock.now_unix'])],
    async run(ctx) {
      const all: Array<[string, unknown]> = [
        ['invalid UTF-8', new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])],
        ['not JSON', 'clock.now_unix please'],
        ['an array', '[1,2,3]'],
        ['no abi_version', { name: 'clock.now_unix', args: {} }],
        ['abi_version 3', { abi_version: 3, name: 'clock.now_unix', args: {} }],
        ['no name', { abi_version: 1, args: {} }],
        ['a number for a name', { abi_version: 1, name: 7, args: {} }],
        ['an unknown key', { abi_version: 1, name: 'clock.now_unix', args: {}, sudo: true }],
        ['empty', ''],
        ['a 201-character name', { abi_version: 1, name: 'x'.repeat(201), args: {} }],
      ];
      // A caller whose request is its call's input (extism/v1) sends what JSON objects can carry; the host checks the rest as input.
      const bad = ctx.engine.caller.anyBytes ? all : all.filter(([, r]) => typeof r === 'object' && !(r instanceof Uint8Array));
      const requests = [...bad.map(([, request]) => request), { ...CLOCK_CALL, abi_version: 2 }, CLOCK_CALL];
      const { answers } = await sendRequests(ctx.call, ctx.engine.caller, 'cap.caller', requests);
      for (const [i, [what]] of bad.entries()) {
        const a = answers[i]!.json;
        expect(
          a.status === 'error' && a.error?.code === 'I-REQ-ENVELOPE' && a.abi_version === 1,
          `${what} was answered ${answers[i]!.text.slice(0, 300)}`,
        );
      }
      const v2 = answers[bad.length]!.json;
      expect(v2.status === 'ok' && v2.abi_version === 2, `an abi_version 2 request was answered ${answers[bad.length]!.text}`);
      expect(
        answers.at(-1)!.json.status === 'ok' && answers.at(-1)!.json.abi_version === 1,
        `the well-formed call after them was answered ${answers.at(-1)!.text}`,
      );
      ctx.observe('messages', Object.fromEntries(bad.map(([what], i) => [what, answers[i]!.json.error?.message.slice(0, 160)])));
    },
  },
  {
    id: 'capabilities.argument-violations',
    title: "Arguments that break a capability's schema are answered I-REQ-CAPABILITY-ARGS listing every violation",
    category: 'capabilities',
    abi: ['ABI-CAP-005'],
    engines: ['helix', 'extism'],
    expected:
      'kv.put {key:"", surprise:1} lists at least 3 violations (key, value, surprise); a kv key over 256 bytes, artifact.read with a negative offset and a non-string id, log.emit with an unknown level, and args that are not an object are each refused with I-REQ-CAPABILITY-ARGS or I-REQ-ENVELOPE; nothing is stored; the guest goes on',
    packs: (engine) => [engine.caller.pack('cap.caller', ['kv.put', 'kv.get', 'kv.list', 'artifact.read', 'log.emit'])],
    async run(ctx) {
      const multi = { abi_version: 1, name: 'kv.put', args: { key: '', surprise: 1 } };
      const calls: Array<[string, unknown, string[]]> = [
        ['kv.put missing value, empty key, unknown key', multi, ['I-REQ-CAPABILITY-ARGS']],
        ['kv.get key of 300 bytes', { abi_version: 1, name: 'kv.get', args: { key: 'k'.repeat(300) } }, ['I-REQ-CAPABILITY-ARGS']],
        [
          'artifact.read negative offset, numeric id',
          { abi_version: 1, name: 'artifact.read', args: { artifact_id: 5, offset: -1 } },
          ['I-REQ-CAPABILITY-ARGS'],
        ],
        [
          'log.emit unknown level, numeric event',
          { abi_version: 1, name: 'log.emit', args: { level: 'shout', event: 3 } },
          ['I-REQ-CAPABILITY-ARGS'],
        ],
        ['args an array', { abi_version: 1, name: 'kv.put', args: [1, 2] }, ['I-REQ-CAPABILITY-ARGS', 'I-REQ-ENVELOPE']],
        ['args a string', { abi_version: 1, name: 'kv.put', args: 'key=value' }, ['I-REQ-CAPABILITY-ARGS', 'I-REQ-ENVELOPE']],
      ];
      const requests = [...calls.map(([, request]) => request), { abi_version: 1, name: 'kv.list', args: {} }];
      const { answers } = await sendRequests(ctx.call, ctx.engine.caller, 'cap.caller', requests);
      const seen: Record<string, unknown> = {};
      for (const [i, [what, , codes]] of calls.entries()) {
        const a = answers[i]!.json;
        expect(a.status === 'error' && codes.includes(a.error!.code), `${what} was answered ${answers[i]!.text.slice(0, 300)}`);
        seen[what] = a.error!.details?.violations ?? a.error!.message;
      }
      const first = answers[0]!.json.error!.details.violations as Array<{ path: string }>;
      expect(first.length >= 3, `only ${first.length} violations were listed for kv.put: ${JSON.stringify(first)}`);
      expect(
        JSON.stringify(answers.at(-1)!.json.capability_result?.result) === '{"keys":[]}',
        `a refused put was stored: ${answers.at(-1)!.text}`,
      );
      ctx.observe('violations', seen);
    },
  },
  {
    id: 'capabilities.payload-bounds',
    title: 'A capability request over 1.5 MB is answered R-CAP-PAYLOAD, and the guest goes on',
    category: 'capabilities',
    abi: ['ABI-CAP-005'],
    engines: ['helix', 'extism'],
    expected:
      'log.emit with a 1.6 MB field is answered R-CAP-PAYLOAD (max_bytes 1500000) and not logged; on helix a kv.put of a 70 kB value is I-REQ-CAPABILITY-ARGS and the next clock.now_unix call is answered ok; the run succeeds',
    packs: (engine) => [
      // A 1.6 MB request travels in the caller's input (hex-encoded by the raw caller): roomy limits.
      engine.caller.pack('cap.big', ['log.emit', 'kv.put', 'clock.now_unix'], {
        limits: { ...RAW_LIMITS, maxInputBytes: 4_000_000, maxMemoryPages: 1024 },
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const pad = { event: 'huge', fields: { pad: 'y'.repeat(1_600_000) } };
      const requests = [
        { abi_version: 1, name: 'log.emit', args: pad },
        { abi_version: 1, name: 'kv.put', args: { key: 'big', value: 'x'.repeat(70_000) } },
        CLOCK_CALL,
      ];
      const { answers, responses } = await sendRequests(ctx.call, ctx.engine.caller, 'cap.big', requests);
      const [huge, big, clock] = answers.map((a) => a.json);
      expect(
        huge?.error?.code === 'R-CAP-PAYLOAD' && huge.error.details.max_bytes === 1_500_000,
        `the 1.6 MB request was answered ${JSON.stringify(huge).slice(0, 300)}`,
      );
      expect(big?.error?.code === 'I-REQ-CAPABILITY-ARGS', `the 70 kB value was answered ${JSON.stringify(big).slice(0, 300)}`);
      expect(clock?.status === 'ok', `the call after them was answered ${JSON.stringify(clock)}`);
      const logged = responses.flatMap((r) => host.audit.list({ runId: r.run_id!, kind: 'log' }));
      expect(logged.length === 0, 'the oversized line was logged');
      ctx.observe('payload_error', huge!.error!.message);
    },
  },
];
