// Property tests of the JSON bounds (ABI-JSON-*) through a real host: random deep, large and odd
// JSON (and damaged UTF-8) as a client's input, a guest's output and a capability request. Each
// call gives exactly one envelope with the documented code, no run is left running, the host
// serves the next call, and accepted values keep their exact meaning: two different inputs never
// share a run, outputs and kv values come back as sent. `npm run fuzz` runs them longer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonValue, ResponseEnvelopeSchema, scanJsonText, type JsonViolation, type ResponseEnvelope } from '../abi/index.js';
import { canonicalJson } from '../host/1-base/hashing.js';
import { hostStore } from '../host/5-host/host.js';
import { jsonRefusal, type JsonEntry } from '../host/1-base/json-entry.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { bytesInput } from './helpers/bytes-guest-wat.js';
import { bytesOf, fuzzRuns, jsonText } from './helpers/json-arbitraries.js';
import { capabilityRequest, okEnvelope, useJsonHost } from './helpers/json-tools.js';

const RUNS = fuzzRuns(60);
/** Generous: a run is a few calls, each well under a second even on a busy machine. */
const TIMEOUT = Math.max(600_000, RUNS * 3_000);
const json = useJsonHost();

/** One call: exactly one valid envelope, and its run (if any) ended. */
async function call(toolId: string, input: unknown): Promise<ResponseEnvelope> {
  const r = ResponseEnvelopeSchema.parse(await json.host.call({ tool_id: toolId, input }));
  if (r.run_id !== null) expect(['succeeded', 'failed']).toContain(getRun(hostStore(json.host), r.run_id)?.status);
  return r;
}

const expectServing = (): Promise<void> => json.expectServing();

const codeOf = (v: JsonViolation, entry: JsonEntry): string => jsonRefusal(v, entry, '').code;
const sameJson = (a: unknown, b: unknown): void => expect(JSON.stringify(a)).toBe(JSON.stringify(b));
/** Depth of an accepted value (at most 64, so recursing is fine here). */
const depthOf = (v: unknown): number => (typeof v === 'object' && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
const utf8 = new TextDecoder('utf-8', { fatal: true });
const decode = (bytes: Uint8Array): string | undefined => {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
};
const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('random JSON through the real host (ABI-JSON-001 to -007)', () => {
  it(
    'as a client input: refused with its I-REQ code and no run, or run once per distinct value',
    async () => {
      const runs = new Map<string, string>();
      await fc.assert(
        fc.asyncProperty(jsonText, async (text) => {
          const input = { d: JSON.parse(text) as unknown };
          const expected = checkJsonValue({ input }, { envelope: true });
          const r = await call('j.echo', input);
          if (expected !== undefined) {
            expect(r).toMatchObject({
              status: 'invalid_request',
              run_id: null,
              error: { code: codeOf(expected, 'request'), details: { pointer: expected.pointer } },
            });
          } else {
            expect(r.status).toBe('success');
            sameJson(r.output, input);
            const key = canonicalJson(input);
            const known = runs.get(key);
            if (known === undefined) expect([...runs.values()]).not.toContain(r.run_id);
            else expect(r.run_id).toBe(known);
            runs.set(key, r.run_id!);
          }
          await expectServing();
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'as a guest output: a terminal S-TOOL fault recorded failed, or the output exactly as sent',
    async () => {
      const output = jsonText.chain((text) => bytesOf(okEnvelope(`{"d":${text}}`)));
      await fc.assert(
        fc.asyncProperty(output, async (bytes) => {
          const r = await call('j.out', bytesInput(bytes));
          const text = decode(bytes);
          const violation = text === undefined ? undefined : scanJsonText(text, { envelope: true });
          const expected =
            text === undefined
              ? 'S-TOOL-OUTPUT-ENCODING'
              : violation !== undefined
                ? codeOf(violation, 'output')
                : parses(text)
                  ? undefined
                  : 'S-TOOL-OUTPUT-JSON';
          if (expected === undefined) {
            expect(r.status).toBe('success');
            sameJson(r.output, (JSON.parse(text!) as { output: unknown }).output);
          } else {
            expect(r).toMatchObject({ status: 'terminal_error', error: { code: expected } });
            expect(getRun(hostStore(json.host), r.run_id!)).toMatchObject({ status: 'failed', result: { error: { code: expected } } });
          }
          await expectServing();
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'as a capability request: too deep ends the run, other breaches are answered, kv keeps exact values',
    async () => {
      let keys = 0;
      const request = fc.tuple(jsonText, fc.constantFrom('kv.put', 'http.request')).chain(([text, name]) => {
        keys += 1;
        return bytesOf(capabilityRequest(name, `{"key":"k${keys}","value":${text}}`)).map((bytes) => ({
          bytes,
          text,
          name,
          key: `k${keys}`,
        }));
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ bytes, text, name, key }) => {
          const r = await call('j.kv', bytesInput(bytes));
          const decoded = decode(bytes);
          const violation = decoded === undefined ? undefined : scanJsonText(decoded, { envelope: true });
          if (violation?.kind === 'depth') {
            expect(r).toMatchObject({ status: 'terminal_error', error: { code: 'S-TOOL-CAPABILITY-DEPTH' } });
            expect(getRun(hostStore(json.host), r.run_id!)?.status).toBe('failed');
          } else {
            // Past the checks, the value is bounded, so the test may recurse on it; kv values are at most 64 KiB.
            const tooBig = (): boolean => JSON.stringify(JSON.parse(text)).length > 64 * 1024;
            const expected =
              decoded === undefined
                ? 'I-REQ-ENVELOPE'
                : violation !== undefined
                  ? codeOf(violation, 'capability')
                  : !parses(decoded)
                    ? 'I-REQ-ENVELOPE'
                    : name !== 'kv.put'
                      ? 'A-AUTH-FORBIDDEN'
                      : tooBig()
                        ? 'I-REQ-CAPABILITY-ARGS'
                        : 'ok';
            expect(r.status).toBe('success');
            const answer = (r.output as { answer: { status: string; error?: { code: string } } }).answer;
            expect(expected === 'ok' ? answer.status : answer.error?.code).toBe(expected);
            if (expected === 'ok') {
              // The guest nests the kv.get answer 5 levels into its output: a value deeper than 60
              // comes back, but that output is then too deep (ABI-JSON-002).
              const value: unknown = JSON.parse(text);
              const got = await call('j.kv', bytesInput(capabilityRequest('kv.get', `{"key":"${key}"}`)));
              if (depthOf(value) > 60) expect(got.error?.code).toBe('S-TOOL-OUTPUT-DEPTH');
              else
                sameJson(
                  (got.output as { answer: { capability_result: { result: { value: unknown } } } }).answer.capability_result.result.value,
                  value,
                );
            }
          }
          await expectServing();
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );
});
