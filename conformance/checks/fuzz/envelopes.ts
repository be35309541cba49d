// Fuzz checks of envelopes: generated request envelopes, guest outputs (and Extism errors),
// capability requests and capability arguments, valid and mutated, each answered with exactly one
// valid response carrying the code of its first fault (ABI-JSON-002..005, ABI-OUTPUT-001..002,
// ABI-CAP-001, ABI-CAP-005, ABI-EXTISM-007..008).
import {
  CapabilityResponseSchema,
  checkJsonValue,
  errorClassOf,
  RequestEnvelopeSchema,
  ResponseEnvelopeSchema,
  scanJsonText,
  type ResponseEnvelope,
} from '../../../abi/index.js';
import { CAPABILITIES } from '../../../capabilities/index.js';
import { jsonRefusal } from '../../../host/1-base/json-entry.js';
import { expect, expectOutcome, type Check, type CheckEnv, type GuestAbi, type PackSpec, type PolicyDocument } from '../../check.js';
import {
  argNames,
  capabilityRequestValue,
  guestErrorValue,
  guestOutputValue,
  mutatedText,
  randomArgs,
  requestEnvelopeValue,
} from '../../kit/fuzz-envelopes.js';
import { extismSelectorModule, selectorModule } from '../../kit/fuzz-guests.js';
import { decode, expectedAnswer, expectedForExtismError, expectedForExtismOutput, expectedForOutput } from '../../kit/fuzz-oracles.js';
import { rand, sampleSeeds } from '../../kit/fuzz-random.js';
import { echoModule } from '../../kit/guest-wat.js';
import { wat2wasm } from '../../kit/wat.js';
import { checkDefaultPolicy } from '../../runner.js';
import { encoder, hex, once, showSample, tally } from './shared.js';

/** 50 guest output envelopes, valid or mutated in shape or bytes, in one selector module per engine (an extism/v1 plugin sends them as its output). */
const outputCases = once(async () => {
  const names = [...CAPABILITIES.keys()];
  const cases = sampleSeeds(0xf022_0004, 50).map((seed) => {
    const r = rand(seed);
    return mutatedText(r, guestOutputValue(r, names));
  });
  const bytes = cases.map((c) => c.bytes);
  const modules: Record<GuestAbi, Uint8Array> = {
    'helix/v1': await wat2wasm(selectorModule(bytes, 'output')),
    'extism/v1': await wat2wasm(extismSelectorModule(bytes, 'output')),
  };
  return { cases, modules };
});

/** 30 error objects, valid or mutated, that an extism/v1 plugin sets with error_set. */
const errorCases = once(async () => {
  const cases = sampleSeeds(0xf022_0009, 30).map((seed) => {
    const r = rand(seed);
    return mutatedText(r, guestErrorValue(r));
  });
  return {
    cases,
    module: await wat2wasm(
      extismSelectorModule(
        cases.map((c) => c.bytes),
        'error',
      ),
    ),
  };
});

/** 50 capability requests, valid or mutated, and two at the JSON bounds, all in one selector module. */
const requestCases = once(async () => {
  const cases = sampleSeeds(0xf022_0005, 50).map((seed) => {
    const r = rand(seed);
    return mutatedText(r, capabilityRequestValue(r, CAPABILITIES));
  });
  // Two at the JSON bounds, which random shapes seldom reach (ABI-JSON-006): args too deep end the run, a number a double cannot hold inside args is answered.
  const deep = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`;
  cases.push({
    bytes: encoder.encode(`{"abi_version":1,"name":"kv.put","args":{"key":"k","value":${deep}}}`),
    what: 'kv.put with a value nested 70 deep',
  });
  cases.push({
    bytes: encoder.encode('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":[1e400]}}'),
    what: 'kv.put with the number 1e400',
  });
  return {
    cases,
    module: await wat2wasm(
      selectorModule(
        cases.map((c) => c.bytes),
        'request',
      ),
    ),
  };
});

/** What each ABI makes of a guest's output bytes: an envelope to read (helix/v1), or the output value itself (extism/v1). */
const OUTPUT_ORACLES: Readonly<Record<GuestAbi, typeof expectedForOutput>> = {
  'helix/v1': expectedForOutput,
  'extism/v1': expectedForExtismOutput,
};

/** The capability answer a request selector guest outputs ({"answer": ...}). */
function answerOf(r: ResponseEnvelope): { status: 'ok' } | { status: 'error'; error: { code: string; details: Record<string, unknown> } } {
  return CapabilityResponseSchema.parse((r.output as { answer: unknown }).answer) as never;
}

/** A closed local port: an http.request that passes every check fails fast, reaching nothing. */
const ORIGIN = 'http://127.0.0.1:9';
/** The capabilities the arguments check allows and grants: all that need no outside service, secret or declared output. */
const ARG_CAPABILITIES = [
  'clock.now_unix',
  'log.emit',
  'kv.get',
  'kv.put',
  'kv.delete',
  'kv.list',
  'artifact.stat',
  'artifact.read',
  'artifact.list',
  'http.request',
];

/** 50 argument sets for capabilities the guest is allowed and granted, all in one selector module. */
const argCases = once(async () => {
  const cases = sampleSeeds(0xf022_0006, 50).map((seed) => {
    const r = rand(seed);
    const name = r.pick(ARG_CAPABILITIES);
    const args = randomArgs(r, argNames(CAPABILITIES.get(name)!.args));
    return { name, args, bytes: encoder.encode(JSON.stringify({ abi_version: 1, name, args })) };
  });
  return {
    cases,
    module: await wat2wasm(
      selectorModule(
        cases.map((c) => c.bytes),
        'request',
      ),
    ),
  };
});

/** The policy of the checks whose guest calls ARG_CAPABILITIES: the default, with http.request granted towards the closed local port. */
function grantingPolicy(env: CheckEnv): PolicyDocument {
  return {
    ...checkDefaultPolicy(env),
    grants: { '*': ['clock.*', 'log.*', 'kv.*', 'artifact.*', 'http.request'] },
    network: { allow: [ORIGIN], allowPrivate: ['127.0.0.1'] },
  };
}

/** The toolpack of a selector module calling ARG_CAPABILITIES. */
function requestPack(id: string, module: Uint8Array): PackSpec {
  return {
    id,
    module,
    manifest: { deterministic: 'side_effectful', capabilities: { abiVersion: 1, allow: ARG_CAPABILITIES, network: [ORIGIN] } },
  };
}

/** The checks of this file, in the report's order. */
export const envelopeFuzzChecks: readonly Check[] = [
  {
    id: 'fuzz.request-envelopes',
    title: '50 generated request envelopes, valid and mutated, each answered with one valid response',
    category: 'fuzz',
    abi: ['ABI-JSON-005', 'ABI-JSON-003'],
    engines: ['helix'],
    expected:
      'host.call never throws: an envelope the JSON check refuses is invalid_request with its I-REQ-JSON code, one the request schema refuses is invalid_request I-REQ-ENVELOPE listing violations, both with run_id null; a valid one to the echo tool answers its input',
    packs: () => [{ id: 'fuzz.echo', module: echoModule() }],
    async run(ctx) {
      const host = await ctx.host();
      const kinds: string[] = [];
      const lines: string[] = [];
      for (const seed of sampleSeeds(0xf022_0008, 50)) {
        const r = rand(seed);
        const raw = requestEnvelopeValue(r, r.pick(['fuzz.echo', 'fuzz.echo', 'fuzz.nope', 'FUZZ.ECHO', '']));
        let res: ResponseEnvelope;
        try {
          res = ResponseEnvelopeSchema.parse(await host.call(raw as never));
        } catch (e) {
          throw new Error(`host.call threw for ${JSON.stringify(raw)}: ${(e as Error).message}`);
        }
        const shown = `${JSON.stringify(raw).slice(0, 200)} -> ${res.status} ${res.error?.code ?? ''}`;
        if (lines.length < 12) lines.push(shown);
        const violation = checkJsonValue(raw, { envelope: true });
        if (violation !== undefined) {
          expectOutcome(res, 'invalid_request', jsonRefusal(violation, 'request', '').code);
          expect(res.run_id === null, `a refused request has run ${res.run_id}: ${shown}`);
          kinds.push('json');
        } else if (!RequestEnvelopeSchema.safeParse(raw).success) {
          expectOutcome(res, 'invalid_request', 'I-REQ-ENVELOPE');
          expect(res.run_id === null && (res.error!.details.violations as unknown[]).length > 0, `no violations or a run: ${shown}`);
          kinds.push('envelope');
        } else {
          const req = RequestEnvelopeSchema.parse(raw);
          if (req.tool_id !== 'fuzz.echo') expect(res.status !== 'success', `an unknown tool succeeded: ${shown}`);
          else if (res.status === 'success' && !req.dry_run)
            expect(JSON.stringify(res.output) === JSON.stringify(req.input), `the echo answered another value: ${shown}`);
          expect(res.error === undefined || errorClassOf(res.error.code) !== undefined, `a code outside the taxonomy: ${shown}`);
          kinds.push(res.status);
        }
      }
      ctx.observe('outcomes', tally(kinds));
      showSample(ctx, 'first 12 envelopes and their answers', lines);
    },
  },
  {
    id: 'fuzz.guest-outputs',
    title: '50 generated guest outputs, valid and mutated in shape or bytes, each classed by its first fault (and 30 Extism errors)',
    category: 'fuzz',
    abi: ['ABI-OUTPUT-001', 'ABI-OUTPUT-002', 'ABI-JSON-002', 'ABI-EXTISM-007', 'ABI-EXTISM-008'],
    engines: ['helix', 'extism'],
    expected:
      'bytes that are not UTF-8 end S-TOOL-OUTPUT-ENCODING, a JSON-bounds breach its S-TOOL-OUTPUT code, text that is not JSON S-TOOL-OUTPUT-JSON; on helix/v1, JSON that is no envelope S-TOOL-OUTPUT-ENVELOPE, an ok envelope answers its output (C-CONTRACT-OUTPUT-SCHEMA if not an object), an error envelope the guest code with its class status, a terminal capability call of a tool allowed none A-AUTH-FORBIDDEN; on extism/v1 the bytes are the output value itself, and an error text that is a taxonomy error object is the guest error, any other S-TOOL-EXTISM-ERROR',
    packs: async (engine) => {
      const outputs = await outputCases();
      return [
        engine.pack('fuzz.outputs', outputs.modules[engine.abi]),
        // Errors set beside the output, where the ABI has them (extism/v1 error_set).
        ...(engine.setsErrors ? [engine.pack('fuzz.errors', (await errorCases()).module)] : []),
      ];
    },
    async run(ctx) {
      const { cases } = await outputCases();
      const got: string[] = [];
      for (const [i, c] of cases.entries()) {
        const res = await ctx.call('fuzz.outputs', { i });
        const want = OUTPUT_ORACLES[ctx.engine.abi](c.bytes);
        const label = `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 160)}`;
        expect(
          res.status === want.status && res.error?.code === want.code,
          `${label}: expected ${want.status} ${want.code ?? ''}, got ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        if (want.status === 'success') expect(JSON.stringify(res.output) === JSON.stringify(want.output), `${label}: the output changed`);
        got.push(want.code ?? 'success');
      }
      ctx.observe('outcomes', tally(got));
      showSample(
        ctx,
        'first 12 outputs',
        cases.slice(0, 12).map((c, i) => `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 200)}`),
      );
      if (!ctx.engine.setsErrors) return;
      const errors = (await errorCases()).cases;
      const set: string[] = [];
      for (const [i, c] of errors.entries()) {
        const res = await ctx.call('fuzz.errors', { i });
        const want = expectedForExtismError(c.bytes);
        const label = `error case ${i} (${c.what}): ${hex(c.bytes).slice(0, 160)}`;
        expect(
          res.status === want.status && res.error?.code === want.code,
          `${label}: expected ${want.status} ${want.code}, got ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        set.push(want.code);
      }
      ctx.observe('error_outcomes', tally(set));
      showSample(
        ctx,
        'first 8 error texts',
        errors.slice(0, 8).map((c, i) => `error case ${i} (${c.what}): ${hex(c.bytes).slice(0, 200)}`),
      );
    },
  },
  {
    id: 'fuzz.capability-requests',
    title: '50 generated capability requests, valid and mutated in shape or bytes, and 2 at the JSON bounds, each answered by the broker',
    category: 'fuzz',
    abi: ['ABI-CAP-001', 'ABI-CAP-002', 'ABI-JSON-006'],
    engines: ['helix'],
    expected:
      'the guest gets a valid capability answer: I-REQ-ENVELOPE for bytes that are not UTF-8 JSON or not a request envelope, the JSON-bounds code for a breach, A-AUTH-FORBIDDEN for a name it is not allowed, I-REQ-CAPABILITY-ARGS for arguments its schema refuses, else the capability answers; a request too deep ends the run S-TOOL-CAPABILITY-DEPTH',
    packs: async () => [requestPack('fuzz.requests', (await requestCases()).module)],
    policy: (_engine, env) => grantingPolicy(env),
    async run(ctx) {
      const { cases } = await requestCases();
      const got: string[] = [];
      for (const [i, c] of cases.entries()) {
        const res = await ctx.call('fuzz.requests', { i });
        const want = expectedAnswer(c.bytes, ARG_CAPABILITIES);
        const label = `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 160)}`;
        if (want === 'depth') {
          expectOutcome(res, 'terminal_error', 'S-TOOL-CAPABILITY-DEPTH');
          got.push('S-TOOL-CAPABILITY-DEPTH');
          continue;
        }
        expect(
          res.status === 'success',
          `${label}: the guest got no answer: ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        const answer = answerOf(res);
        const code = answer.status === 'ok' ? 'ok' : answer.error.code;
        if (want === 'answered')
          expect(code === 'ok' || (code !== 'I-REQ-CAPABILITY-ARGS' && errorClassOf(code) !== undefined), `${label}: answered ${code}`);
        else expect(code === want, `${label}: answered ${code}, expected ${want}`);
        got.push(code);
      }
      ctx.observe('answers', tally(got));
      showSample(
        ctx,
        'first 12 requests',
        cases.slice(0, 12).map((c, i) => `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 200)}`),
      );
    },
  },
  {
    id: 'fuzz.capability-args',
    title: '50 generated argument sets for allowed and granted capabilities: refused exactly when their schema refuses them',
    category: 'fuzz',
    abi: ['ABI-CAP-005'],
    engines: ['helix'],
    expected:
      'each guest gets an answer: I-REQ-CAPABILITY-ARGS listing violations exactly when the capability schema (or the JSON bounds, inside args) refuses the arguments; otherwise the capability answers, ok or with an error of the taxonomy (http.request reaches only a closed local port)',
    packs: async () => [requestPack('fuzz.args', (await argCases()).module)],
    policy: (_engine, env) => grantingPolicy(env),
    async run(ctx) {
      const { cases } = await argCases();
      const got: string[] = [];
      for (const [i, c] of cases.entries()) {
        const res = await ctx.call('fuzz.args', { i });
        const label = `case ${i}: ${JSON.stringify({ name: c.name, args: c.args }).slice(0, 200)}`;
        expect(
          res.status === 'success',
          `${label}: the guest got no answer: ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        const answer = answerOf(res);
        const code = answer.status === 'ok' ? 'ok' : answer.error.code;
        const violation = scanJsonText(decode(c.bytes)!, { envelope: true });
        const refused = violation !== undefined || !CAPABILITIES.get(c.name)!.args.safeParse(c.args).success;
        if (refused) {
          const want = violation === undefined ? 'I-REQ-CAPABILITY-ARGS' : jsonRefusal(violation, 'capability', '').code;
          expect(code === want, `${label}: answered ${code}, expected ${want}`);
          if (answer.status === 'error' && violation === undefined)
            expect(((answer.error.details.violations ?? []) as unknown[]).length > 0, `${label}: no violations listed`);
        } else {
          expect(
            code !== 'I-REQ-CAPABILITY-ARGS' && (code === 'ok' || errorClassOf(code) !== undefined),
            `${label}: valid arguments answered ${code}`,
          );
        }
        got.push(`${c.name}: ${code}`);
      }
      ctx.observe('answers', tally(got));
      showSample(
        ctx,
        'first 12 argument sets',
        cases.slice(0, 12).map((c) => `${c.name} ${JSON.stringify(c.args).slice(0, 200)}`),
      );
    },
  },
];
