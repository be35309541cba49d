// io checks of what a guest answers: output that is not UTF-8, not JSON or not an envelope, an ok
// output against the output schema, and extism/v1's output (the value itself) and errors
// (ABI-OUTPUT-001..003, ABI-EXTISM-007, ABI-EXTISM-008).
import { CheckFailure, expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { extismWat } from '../../kit/extism-wat.js';
import { bytesInput, bytesOutputModule } from '../../kit/io-guests.js';
import { expectDetails, expectGuestFault, ioPack } from '../../kit/io-support.js';
import { BOTH, hasLoneSurrogate, OPEN } from './shared.js';

/** The checks of this file, in the report's order. */
export const outputChecks: readonly Check[] = [
  {
    id: 'io.output-not-utf8-or-json',
    title:
      'Output that is not UTF-8 (bad bytes, overlong forms, encoded surrogates) or not JSON (text, empty, trailing bytes) is a tool fault',
    category: 'io',
    abi: ['ABI-OUTPUT-001', 'ABI-EXTISM-007'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-OUTPUT-ENCODING for FF FE, C0 AF and ED A0 80 inside a string; S-TOOL-OUTPUT-JSON for "hello", no output at all, and an envelope followed by a second value; each run recorded failed',
    packs: (engine) => [ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN })],
    async run(ctx) {
      const wrap = (inner: Uint8Array): Uint8Array => {
        const [head = '', tail = ''] = ctx.engine.output.answer('{"s":"@"}').split('@');
        return new Uint8Array([...new TextEncoder().encode(head), ...inner, ...new TextEncoder().encode(tail)]);
      };
      for (const [label, bytes] of [
        ['ff fe', new Uint8Array([0xff, 0xfe])],
        ['overlong /', new Uint8Array([0xc0, 0xaf])],
        ['encoded surrogate', new Uint8Array([0xed, 0xa0, 0x80])],
        ['truncated sequence', new Uint8Array([0xe2, 0x82])],
      ] as const) {
        const r = await ctx.call('io.bytes', bytesInput(wrap(bytes)));
        await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-ENCODING');
        ctx.observe(`encoding ${label}`, r.error?.message);
      }
      const valid = ctx.engine.output.answer('{"a":1}');
      for (const [label, text] of [
        ['text', 'hello'],
        ['empty', ''],
        ['two values', `${valid} ${valid}`],
        ['truncated', valid.slice(0, -1)],
      ] as const) {
        const r = await ctx.call('io.bytes', bytesInput(text));
        await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-JSON');
        ctx.observe(`json ${label}`, r.error?.message);
      }
      // Not JSON, with an emoji straddling the host's preview cut: the fault report must stay Unicode text (ABI-JSON-004).
      const astral = await ctx.call('io.bytes', bytesInput(`${'z'.repeat(199)}${'😀'.repeat(300)}`));
      await expectGuestFault(ctx, astral, 'S-TOOL-OUTPUT-JSON');
      expect(
        !hasLoneSurrogate(astral.error),
        `the fault report holds a lone surrogate (an emoji cut in half): ${JSON.stringify(astral.error).slice(0, 300)}`,
      );
    },
  },
  {
    id: 'io.output-not-an-envelope',
    title:
      'A helix/v1 output that is JSON but not exactly one envelope is S-TOOL-OUTPUT-ENVELOPE; a valid error envelope decides the status by its class',
    category: 'io',
    abi: ['ABI-OUTPUT-002'],
    engines: ['helix'],
    expected:
      'S-TOOL-OUTPUT-ENVELOPE for an extra key, an unknown status, a missing output, an array, a bare value, an error code outside the taxonomy, an error with extra keys, and a capability_call without abi_version; an error envelope with R-UPSTREAM-X is retryable_error and with D-DATA-X terminal_error, carrying its code, message and details; a terminal capability_call of clock.now_unix is A-AUTH-FORBIDDEN without the grant and its result is the output with it',
    packs: () => [
      { id: 'io.bytes', module: bytesOutputModule(), outputSchema: OPEN },
      {
        id: 'io.bytes_clock',
        module: bytesOutputModule(),
        outputSchema: OPEN,
        manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
      },
    ],
    async run(ctx) {
      const bad: Array<[string, string]> = [
        ['extra key', '{"status":"ok","output":{},"extra":1}'],
        ['unknown status', '{"status":"done","output":{}}'],
        ['missing output', '{"status":"ok"}'],
        ['array', '[{"status":"ok","output":{}}]'],
        ['bare value', '42'],
        ['code outside the taxonomy', '{"status":"error","error":{"code":"NOPE","message":"m"}}'],
        ['error with extra key', '{"status":"error","error":{"code":"D-DATA-X","message":"m","stack":"x"}}'],
        ['capability_call without abi_version', '{"status":"capability_call","capability_call":{"name":"clock.now_unix","args":{}}}'],
      ];
      for (const [label, text] of bad) {
        const r = await ctx.call('io.bytes', bytesInput(text));
        try {
          await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-ENVELOPE');
        } catch (e) {
          throw new CheckFailure(`${label}: ${(e as Error).message}`);
        }
        ctx.observe(label, r.error?.message);
      }
      const astral = await ctx.call('io.bytes', bytesInput(`{"status":"nope","x":"${'z'.repeat(175)}${'😀'.repeat(300)}"}`));
      await expectGuestFault(ctx, astral, 'S-TOOL-OUTPUT-ENVELOPE');
      expect(
        !hasLoneSurrogate(astral.error),
        `the fault report holds a lone surrogate (an emoji cut in half): ${JSON.stringify(astral.error).slice(0, 300)}`,
      );
      const retry = await ctx.call(
        'io.bytes',
        bytesInput('{"status":"error","error":{"code":"R-UPSTREAM-FLAKY","message":"upstream said no","details":{"n":1},"hint":"later"}}'),
      );
      expectOutcome(retry, 'retryable_error', 'R-UPSTREAM-FLAKY');
      expect(
        retry.error!.message === 'upstream said no' && JSON.stringify(retry.error!.details) === '{"n":1}',
        `the tool's error is not carried: ${JSON.stringify(retry.error)}`,
      );
      const data = await ctx.call(
        'io.bytes',
        bytesInput('{"status":"error","error":{"code":"D-DATA-FORMAT","message":"bad line","details":{"line":3}}}'),
      );
      expectOutcome(data, 'terminal_error', 'D-DATA-FORMAT');
      expectDetails(data, { line: 3 });
      // A terminal capability call is served under the allowlist: refused when not allowed, its result the output when allowed.
      const terminal = '{"status":"capability_call","abi_version":1,"capability_call":{"name":"clock.now_unix","args":{}}}';
      const forbidden = await ctx.call('io.bytes', bytesInput(terminal));
      expect(
        forbidden.status !== 'success' && forbidden.error?.code === 'A-AUTH-FORBIDDEN',
        `a terminal call of a capability the tool may not use answered ${forbidden.status} ${forbidden.error?.code}`,
      );
      const served = expectSuccess(await ctx.call('io.bytes_clock', bytesInput(terminal)));
      expect(
        typeof (served as { unix_ms?: unknown }).unix_ms === 'number',
        `the terminal call's result is not the output: ${JSON.stringify(served)}`,
      );
      ctx.observe('terminal_forbidden', forbidden.error);
    },
  },
  {
    id: 'io.output-schema',
    title: "An ok output that breaks the tool's outputSchema is C-CONTRACT-OUTPUT-SCHEMA listing every violation",
    category: 'io',
    abi: ['ABI-OUTPUT-003', 'ABI-EXTISM-007'],
    engines: BOTH,
    expected:
      'terminal_error C-CONTRACT-OUTPUT-SCHEMA whose details list all three violations (count not an integer, name missing, an extra member); a conforming output succeeds',
    packs: (engine) => [
      ioPack(
        engine,
        'io.bytes',
        engine.guests.bytes('output'),
        {},
        {
          outputSchema: {
            type: 'object',
            required: ['count', 'name'],
            additionalProperties: false,
            properties: { count: { type: 'integer' }, name: { type: 'string' } },
          },
        },
      ),
    ],
    async run(ctx) {
      const wrap = ctx.engine.output.answer;
      const r = await ctx.call('io.bytes', bytesInput(wrap('{"count":"many","sneaky":true}')));
      expectOutcome(r, 'terminal_error', 'C-CONTRACT-OUTPUT-SCHEMA');
      const details = JSON.stringify(r.error!.details);
      for (const word of ['count', 'name', 'sneaky']) expect(details.includes(word), `the violations do not name ${word}: ${details}`);
      ctx.observe('details', r.error!.details);
      const ok = await ctx.call('io.bytes', bytesInput(wrap('{"count":3,"name":"x"}')));
      expect(JSON.stringify(expectSuccess(ok)) === '{"count":3,"name":"x"}', 'the conforming output did not come back');
    },
  },
  {
    id: 'io.extism-output-is-the-value',
    title: 'An extism/v1 output that looks like an error envelope is the output itself, never read as an envelope',
    category: 'io',
    abi: ['ABI-EXTISM-007'],
    engines: ['extism'],
    expected:
      'success whose output is {"status":"error","error":{"code":"A-AUTH-FORBIDDEN",…}} byte for byte; a capability_call-shaped output is also just output',
    packs: (engine) => [ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN })],
    async run(ctx) {
      for (const text of [
        '{"status":"error","error":{"code":"A-AUTH-FORBIDDEN","message":"forbidden"}}',
        '{"status":"capability_call","abi_version":1,"capability_call":{"name":"kv.put","args":{}}}',
      ]) {
        const out = expectSuccess(await ctx.call('io.bytes', bytesInput(text)));
        expect(JSON.stringify(out) === text, `the output was read as something else: ${JSON.stringify(out)}`);
      }
    },
  },
  {
    id: 'io.extism-errors',
    title: 'An extism/v1 plugin: its JSON error is its error, other error text, a non-zero return and a trap are tool faults',
    category: 'io',
    abi: ['ABI-EXTISM-008'],
    engines: ['extism'],
    expected:
      'D-DATA-FORMAT terminal_error for a JSON taxonomy error; R-UPSTREAM-X retryable_error; S-TOOL-EXTISM-ERROR with the first 1024 bytes in details.plugin_error for 3000 bytes of text; S-TOOL-EXTISM-ERROR with details.return_code 7; S-TOOL-TRAP with memory_pages for unreachable',
    packs: (engine) => [
      ioPack(engine, 'io.err', engine.guests.bytes('error'), {}, { outputSchema: OPEN }),
      ioPack(engine, 'io.ret7', extismWat('(i32.const 7)')),
      ioPack(engine, 'io.trap', extismWat('unreachable')),
    ],
    async run(ctx) {
      const data = await ctx.call(
        'io.err',
        bytesInput('{"code":"D-DATA-FORMAT","message":"bad line","details":{"line":1},"hint":"fix it"}'),
      );
      expectOutcome(data, 'terminal_error', 'D-DATA-FORMAT');
      expectDetails(data, { line: 1 });
      const retry = await ctx.call('io.err', bytesInput('{"code":"R-UPSTREAM-FLAKY","message":"later"}'));
      expectOutcome(retry, 'retryable_error', 'R-UPSTREAM-FLAKY');
      const text = `${'é'.repeat(700)}${'z'.repeat(1600)}`;
      const plain = await ctx.call('io.err', bytesInput(text));
      await expectGuestFault(ctx, plain, 'S-TOOL-EXTISM-ERROR');
      const got = String(plain.error!.details.plugin_error);
      expect(
        Buffer.byteLength(got) <= 1024 && Buffer.byteLength(got) >= 1021 && text.startsWith(got),
        `plugin_error is not the first 1024 bytes of the text: ${Buffer.byteLength(got)} bytes`,
      );
      ctx.observe('plugin_error_bytes', Buffer.byteLength(got));
      // An emoji straddling every cut (the message's and details'): the report must stay Unicode text (ABI-JSON-004).
      const astral = await ctx.call('io.err', bytesInput(`${'z'.repeat(199)}${'😀'.repeat(600)}`));
      await expectGuestFault(ctx, astral, 'S-TOOL-EXTISM-ERROR');
      expect(
        !hasLoneSurrogate(astral.error),
        `the fault report holds a lone surrogate (an emoji cut in half): ${JSON.stringify(astral.error).slice(0, 300)}`,
      );
      expect(Buffer.byteLength(String(astral.error!.details.plugin_error)) <= 1024, 'plugin_error of emoji is over 1024 bytes');
      const notCode = await ctx.call('io.err', bytesInput('{"code":"NOPE","message":"m"}'));
      await expectGuestFault(ctx, notCode, 'S-TOOL-EXTISM-ERROR');
      const seven = await ctx.call('io.ret7', {});
      await expectGuestFault(ctx, seven, 'S-TOOL-EXTISM-ERROR', { return_code: 7 });
      const trap = await ctx.call('io.trap', {});
      await expectGuestFault(ctx, trap, 'S-TOOL-TRAP');
      expect(
        typeof trap.error!.details.memory_pages === 'number' && typeof trap.error!.details.max_memory_pages === 'number',
        `the trap has no memory_pages: ${JSON.stringify(trap.error!.details)}`,
      );
    },
  },
];
