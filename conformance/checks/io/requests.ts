// io checks of requests and responses: every outcome is exactly one response envelope,
// tool_version picks a version or is refused, and a malformed request or input lists every
// violation with nothing run (ABI-RESP-001..003).
import { createHash } from 'node:crypto';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { bytesInput } from '../../kit/io-guests.js';
import { expectRefused, ioPack } from '../../kit/io-support.js';
import { wat2wasm } from '../../kit/wat.js';
import { BOTH, numberModule, OPEN } from './shared.js';

/** The checks of this file, in the report's order. */
export const requestChecks: readonly Check[] = [
  {
    id: 'io.response-envelope',
    title: 'Every outcome, hostile or not, is exactly one response envelope with metrics, provenance and a full error',
    category: 'io',
    abi: ['ABI-RESP-001'],
    engines: BOTH,
    expected:
      'for success, invalid_request, terminal_error and retryable_error: status in the four, metrics (duration_ms, fuel_used, memory_peak_pages), provenance (tool_id, exact tool_version, the module digest sha256 of its bytes) and, when not success, an error with a taxonomy code, message, details and hint',
    packs: (engine) => [
      ioPack(
        engine,
        'io.bytes',
        engine.guests.bytes('output'),
        {},
        { outputSchema: OPEN, inputSchema: { type: 'object', required: ['hex'] } },
      ),
    ],
    async run(ctx) {
      const bytes = await wat2wasm(ctx.engine.guests.bytes('output'), 'bytes.wat');
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      const wrap = ctx.engine.output.answer;
      // An output that is an envelope can carry the tool's own error, and so a retryable one; the value itself cannot.
      const enveloped = ctx.engine.output.enveloped;
      const errorEnvelope = '{"status":"error","error":{"code":"R-UPSTREAM-X","message":"m"}}';
      const outcomes = [
        await ctx.call('io.bytes', bytesInput(wrap('{"ok":1}'))),
        await ctx.call('io.bytes', { nothex: 1 }),
        await ctx.call('io.bytes', bytesInput('not json')),
        enveloped ? await ctx.call('io.bytes', bytesInput(errorEnvelope)) : undefined,
        await ctx.call('io.unknown.tool', {}),
      ].filter((r) => r !== undefined);
      const statuses = new Set<string>();
      for (const r of outcomes) {
        statuses.add(r.status);
        expect(['success', 'retryable_error', 'terminal_error', 'invalid_request'].includes(r.status), `status ${r.status}`);
        expect(
          typeof r.metrics.duration_ms === 'number' &&
            Number.isInteger(r.metrics.fuel_used) &&
            Number.isInteger(r.metrics.memory_peak_pages),
          `metrics incomplete: ${JSON.stringify(r.metrics)}`,
        );
        expect(
          typeof r.provenance.tool_id === 'string' && typeof r.provenance.tool_version === 'string',
          `provenance incomplete: ${JSON.stringify(r.provenance)}`,
        );
        if (r.status !== 'success') {
          expect(
            r.error !== undefined &&
              /^[A-Z]+-[A-Z]+-/.test(r.error.code) &&
              r.error.message.length > 0 &&
              typeof r.error.details === 'object' &&
              typeof r.error.hint === 'string' &&
              r.error.hint.length > 0,
            `the error is incomplete: ${JSON.stringify(r.error)}`,
          );
        } else expect(r.error === undefined, 'a success carries an error');
      }
      for (const r of outcomes.slice(0, 3)) {
        expect(r.provenance.tool_id === 'io.bytes' && r.provenance.tool_version === '1.0.0', `provenance ${JSON.stringify(r.provenance)}`);
        expect(
          r.provenance.digest === digest && typeof digest === 'string' && digest.startsWith('sha256:'),
          `provenance digest ${r.provenance.digest} is not the module's ${digest}`,
        );
      }
      const need = ['success', 'invalid_request', 'terminal_error', ...(enveloped ? ['retryable_error'] : [])];
      for (const s of need) expect(statuses.has(s), `no ${s} among the outcomes`);
      ctx.observe('statuses', [...statuses]);
    },
  },
  {
    id: 'io.tool-version',
    title: 'tool_version picks the newest version in range, and a range across majors is refused',
    category: 'io',
    abi: ['ABI-RESP-002'],
    engines: ['helix'],
    expected:
      "'*' and '>=1.0.0' with 1.0.0, 1.2.0 and 2.0.0 loaded: C-CONTRACT-VERSION-AMBIGUOUS; '^1' runs 1.2.0; '1.0.0' runs 1.0.0; '^3' is refused naming no version; a non-semver range is refused; nothing runs on a refusal",
    packs: () => [
      { id: 'io.versioned', dirName: 'v100', module: numberModule('(i64.const 100)'), manifest: { version: '1.0.0' } },
      { id: 'io.versioned', dirName: 'v120', module: numberModule('(i64.const 120)'), manifest: { version: '1.2.0' } },
      { id: 'io.versioned', dirName: 'v200', module: numberModule('(i64.const 200)'), manifest: { version: '2.0.0' } },
    ],
    async run(ctx) {
      const call = (range: string | undefined) =>
        ctx.call('io.versioned', { range: range ?? null }, range === undefined ? {} : { request: { tool_version: range } });
      for (const range of [undefined, '*', '>=1.0.0']) {
        const r = await call(range);
        expectOutcome(r, 'terminal_error', 'C-CONTRACT-VERSION-AMBIGUOUS');
        expect(r.run_id === null, 'an ambiguous call became a run');
      }
      const v1 = await call('^1');
      expect(expectSuccess(v1).value === 120 && v1.provenance.tool_version === '1.2.0', `^1 ran ${v1.provenance.tool_version}`);
      const exact = await call('1.0.0');
      expect(expectSuccess(exact).value === 100 && exact.provenance.tool_version === '1.0.0', `1.0.0 ran ${exact.provenance.tool_version}`);
      const v2 = await call('2');
      expect(expectSuccess(v2).value === 200, `2 ran ${v2.provenance.tool_version}`);
      const none = await call('^3');
      expect(none.status !== 'success' && none.run_id === null, `^3 answered ${none.status}`);
      const junk = await call('not a range ;rm -rf');
      expect(junk.status !== 'success' && junk.run_id === null, `a non-semver range answered ${junk.status}`);
      ctx.observe('no_version', none.error);
      ctx.observe('junk_range', junk.error);
    },
  },
  {
    id: 'io.request-validation',
    title: 'A malformed request envelope or an input against inputSchema lists every violation, and nothing runs',
    category: 'io',
    abi: ['ABI-RESP-003'],
    engines: ['helix'],
    expected:
      'I-REQ-JSON-DEPTH first for a bad envelope whose input is 100 levels deep; I-REQ-ENVELOPE listing the unknown member and the bad tool_id type; I-REQ-INPUT listing all three input violations; an input that is an array is refused; no run is made (the guest would trap if it ran)',
    packs: () => [
      {
        id: 'io.strict',
        module: numberModule('unreachable'),
        inputSchema: {
          type: 'object',
          required: ['n', 'name'],
          additionalProperties: false,
          properties: { n: { type: 'integer', minimum: 0 }, name: { type: 'string' } },
        },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      // The whole request is checked as JSON data first: a bad envelope with deep input is I-REQ-JSON-DEPTH.
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 100; i++) deep = { a: deep };
      const first = await host.call({ tool_id: 5, input: deep, sudo: true });
      expectRefused(first as never, 'I-REQ-JSON-DEPTH');
      const env = await host.call({ tool_id: 5, input: {}, sudo: true });
      expectRefused(env as never, 'I-REQ-ENVELOPE');
      const envDetails = JSON.stringify(env.error!.details);
      expect(envDetails.includes('sudo') && envDetails.includes('tool_id'), `not every envelope violation is listed: ${envDetails}`);
      const input = await ctx.call('io.strict', { n: -1, extra: 'x' });
      expectRefused(input, 'I-REQ-INPUT');
      const details = JSON.stringify(input.error!.details);
      for (const word of ['n', 'name', 'extra']) expect(details.includes(`${word}`), `I-REQ-INPUT does not list ${word}: ${details}`);
      const violations = (input.error!.details as { violations?: unknown[] }).violations;
      expect(Array.isArray(violations) && violations.length >= 3, `fewer than three violations listed: ${details}`);
      const arr = await host.call({ tool_id: 'io.strict', input: [1, 2] });
      expect(arr.status === 'invalid_request' && arr.run_id === null, `an array input answered ${arr.status}`);
      ctx.observe('envelope', env.error);
      ctx.observe('input', input.error);
    },
  },
];
