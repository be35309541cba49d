// Property tests of the envelope parsers through a real host (conformance/kit/fuzz-envelopes.ts):
// request envelopes a client hands host.call, output envelopes a guest returns and capability
// requests a guest sends (helix/v1, and outputs and error texts of extism/v1 plugins), each valid,
// mutated in shape or mutated in bytes (oracles: conformance/kit/fuzz-oracles.ts). No parser throws or
// crashes the host: every call answers one valid response envelope, refusals carry the taxonomy
// code the ABI names for the first thing wrong (ABI-JSON-005, ABI-OUTPUT-001/002, ABI-EXTISM-007/008, ABI-CAP-001,
// ABI-JSON-006), and what is valid is served as sent. `npm run fuzz` runs them longer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CapabilityResponseSchema,
  checkJsonValue,
  errorClassOf,
  RequestEnvelopeSchema,
  ResponseEnvelopeSchema,
  scanJsonText,
  type ResponseEnvelope,
} from '../abi/index.js';
import { hostStore } from '../host/5-host/host.js';
import { jsonRefusal } from '../host/1-base/json-entry.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { CAPABILITIES } from '../capabilities/index.js';
import {
  capabilityRequestValue,
  guestErrorValue,
  guestOutputValue,
  mutatedText,
  requestEnvelopeValue,
} from '../conformance/kit/fuzz-envelopes.js';
import {
  decode,
  expectedAnswer,
  expectedForExtismError,
  expectedForExtismOutput,
  expectedForOutput,
  parseJson,
} from '../conformance/kit/fuzz-oracles.js';
import { mutateBytes } from '../conformance/kit/fuzz-json.js';
import { rand } from '../conformance/kit/fuzz-random.js';
import { bytesInput } from './helpers/bytes-guest-wat.js';
import { fuzzRuns } from './helpers/json-arbitraries.js';
import { useJsonHost } from './helpers/json-tools.js';

const RUNS = fuzzRuns(150);
const TIMEOUT = Math.max(600_000, RUNS * 2_000);
const json = useJsonHost();
const seeds = fc.integer({ min: 0, max: 0x7fffffff });
/** One response: a valid envelope whose error code, if any, is of a taxonomy class (a guest may send a subcode of its own, ABI-OUTPUT-002); its run, if any, ended (a dry run names its run but stores none). */
function checked(raw: unknown): ResponseEnvelope {
  const r = ResponseEnvelopeSchema.parse(raw);
  if (r.error !== undefined) expect(errorClassOf(r.error.code), r.error.code).toBeDefined();
  const dryRun = r.warnings.some((w) => w.startsWith('dry_run'));
  if (r.run_id !== null && r.status !== 'invalid_request' && !dryRun)
    expect(['succeeded', 'failed', 'blocked']).toContain(getRun(hostStore(json.host), r.run_id)?.status);
  return r;
}

describe('the envelope parsers on random and mutated envelopes', () => {
  it(
    'request envelopes: refused with the code of the first breach and no run, or served',
    async () => {
      await fc.assert(
        fc.asyncProperty(seeds, async (seed) => {
          const r = rand(seed);
          let raw: unknown = requestEnvelopeValue(r, r.pick(['j.echo', 'j.echo', 'j.nope', 'J.ECHO', '']));
          if (r.chance(0.3)) {
            // Bytes mutated, as a client that writes its own JSON might send them, when they still parse.
            const text = decode(mutateBytes(r, new TextEncoder().encode(JSON.stringify(raw))).bytes);
            const parsed = text === undefined ? { ok: false as const } : parseJson(text);
            if (parsed.ok) raw = parsed.value;
          }
          const res = checked(await json.host.call(raw as never));
          const violation = checkJsonValue(raw, { envelope: true });
          if (violation !== undefined) {
            expect(res).toMatchObject({
              status: 'invalid_request',
              run_id: null,
              error: { code: jsonRefusal(violation, 'request', '').code },
            });
          } else if (!RequestEnvelopeSchema.safeParse(raw).success) {
            expect(res).toMatchObject({ status: 'invalid_request', run_id: null, error: { code: 'I-REQ-ENVELOPE' } });
            expect((res.error!.details.violations as unknown[]).length).toBeGreaterThan(0);
          } else {
            const req = RequestEnvelopeSchema.parse(raw);
            // -0 and 0 are the same input (ABI-JSON-003): compared as JSON text.
            if (res.status === 'success' && !req.dry_run) expect(JSON.stringify(res.output)).toBe(JSON.stringify(req.input));
            if (req.tool_id !== 'j.echo') expect(res.status).not.toBe('success');
          }
        }),
        { numRuns: RUNS },
      );
      await json.expectServing();
    },
    TIMEOUT,
  );

  it(
    'guest output envelopes: the S-TOOL code of the first fault, the guest error as sent, or the output',
    async () => {
      const names = [...CAPABILITIES.keys()];
      await fc.assert(
        fc.asyncProperty(seeds, async (seed) => {
          const r = rand(seed);
          const { bytes, what } = mutatedText(r, guestOutputValue(r, names));
          const res = checked(await json.host.call({ tool_id: 'j.out', input: bytesInput(bytes) }));
          const want = expectedForOutput(bytes);
          expect(res, what).toMatchObject({
            status: want.status,
            ...(want.code === undefined ? {} : { error: { code: want.code } }),
            ...(want.status === 'success' ? { output: want.output } : {}),
          });
          if (want.status !== 'success' && want.code!.startsWith('S-TOOL-'))
            expect(getRun(hostStore(json.host), res.run_id!)).toMatchObject({ status: 'failed', result: { error: { code: want.code } } });
        }),
        { numRuns: RUNS },
      );
      await json.expectServing();
    },
    TIMEOUT,
  );

  it(
    'capability requests: answered with a valid capability response, or the run ended for depth',
    async () => {
      await fc.assert(
        fc.asyncProperty(seeds, async (seed) => {
          const r = rand(seed);
          const { bytes, what } = mutatedText(r, capabilityRequestValue(r, CAPABILITIES));
          const res = checked(await json.host.call({ tool_id: 'j.kv', input: bytesInput(bytes) }));
          const text = decode(bytes);
          const violation = text === undefined ? undefined : scanJsonText(text, { envelope: true });
          if (violation?.kind === 'depth') {
            expect(res, what).toMatchObject({ status: 'terminal_error', error: { code: 'S-TOOL-CAPABILITY-DEPTH' } });
            return;
          }
          expect(res.status, what).toBe('success');
          const answer = CapabilityResponseSchema.parse((res.output as { answer: unknown }).answer);
          const expected = expectedAnswer(bytes, ['kv.put', 'kv.get']);
          if (expected === 'answered') expect(answer.status, what).toBe('ok');
          else expect(answer.status === 'ok' ? 'ok' : answer.error.code, what).toBe(expected);
        }),
        { numRuns: RUNS },
      );
      await json.expectServing();
    },
    TIMEOUT,
  );

  it(
    'extism/v1 outputs and error texts: the value itself (ABI-EXTISM-007), the guest error or S-TOOL-EXTISM-ERROR (ABI-EXTISM-008)',
    async () => {
      const names = [...CAPABILITIES.keys()];
      await fc.assert(
        fc.asyncProperty(seeds, fc.boolean(), async (seed, asError) => {
          const r = rand(seed);
          const { bytes, what } = asError ? mutatedText(r, guestErrorValue(r)) : mutatedText(r, guestOutputValue(r, names));
          const res = checked(await json.host.call({ tool_id: asError ? 'j.x_err' : 'j.x_out', input: bytesInput(bytes) }));
          const want = asError ? expectedForExtismError(bytes) : expectedForExtismOutput(bytes);
          expect(res, what).toMatchObject({
            status: want.status,
            ...(want.code === undefined ? {} : { error: { code: want.code } }),
            ...(want.status === 'success' ? { output: want.output } : {}),
          });
        }),
        { numRuns: RUNS },
      );
      await json.expectServing();
    },
    TIMEOUT,
  );
});
