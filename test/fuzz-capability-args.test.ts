// Property tests of the capability argument checks (ABI-CAP-005) on random arguments
// (conformance/kit/fuzz-envelopes.ts): for every capability the host serves, its argument schema
// never throws, whatever it is given; and through a real host, a guest allowed and granted the
// capability gets I-REQ-CAPABILITY-ARGS listing the violations exactly when the schema refuses
// the arguments (or the JSON bounds do, ABI-JSON-006), and otherwise a valid answer, never a
// crash. `npm run fuzz` runs them longer.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CapabilityResponseSchema, errorClassOf, ResponseEnvelopeSchema, scanJsonText } from '../abi/index.js';
import { CAPABILITIES } from '../capabilities/index.js';
import { createHost, type Host } from '../host/5-host/host.js';
import { jsonRefusal } from '../host/1-base/json-entry.js';
import { argNames, randomArgs } from '../conformance/kit/fuzz-envelopes.js';
import { rand } from '../conformance/kit/fuzz-random.js';
import { bytesInput, bytesRequestModule } from './helpers/bytes-guest-wat.js';
import { fuzzRuns } from './helpers/json-arbitraries.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const RUNS = fuzzRuns(200);
const seeds = fc.integer({ min: 0, max: 0x7fffffff });
/** A closed local port: an http.request that passes every check fails fast, reaching nothing. */
const ORIGIN = 'http://127.0.0.1:9';
/** What the guest may call, all granted: every capability that needs no outside service and no declared output. */
const SERVED = [
  'clock.now_unix',
  'log.emit',
  'kv.get',
  'kv.put',
  'kv.delete',
  'kv.list',
  'artifact.stat',
  'artifact.read',
  'artifact.list',
  'secrets.get',
  'http.request',
];
const ALLOW = [...SERVED.filter((n) => n !== 'secrets.get'), 'secrets.get.db_password', 'secrets.get.api_key'];

const home = tempDir('helix-fuzz-args-home-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;

beforeAll(async () => {
  const limits = { maxInputBytes: 1_000_000, maxOutputBytes: 1_000_000, fuel: 1_000_000_000, maxMemoryPages: 64, maxCapabilityCalls: 4 };
  plugins = await toolpacksDir([
    {
      id: 'a.req',
      module: bytesRequestModule(),
      manifest: { limits, deterministic: 'side_effectful', capabilities: { abiVersion: 1, allow: ALLOW, network: [ORIGIN] } },
      outputSchema: { type: 'object' },
    },
  ]);
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  writeFileSync(
    policyFile,
    [
      'version: 1',
      'tools: { allow: ["*"] }',
      'grants:',
      `  a.req: ${JSON.stringify(ALLOW)}`,
      'secrets:',
      '  db_password: { env: HELIX_FUZZ_DB_PASSWORD }',
      'network:',
      `  allow: ["${ORIGIN}"]`,
      '  allowPrivate: ["127.0.0.1"]',
      '',
    ].join('\n'),
  );
  process.env.HELIX_FUZZ_DB_PASSWORD = 'fuzz-secret-value-0123456789';
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
}, 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

describe('capability arguments (ABI-CAP-005)', () => {
  it('every capability schema refuses or accepts random arguments without throwing, naming each violation', () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const r = rand(seed);
        for (const [name, cap] of CAPABILITIES) {
          const args = randomArgs(r, argNames(cap.args));
          const parsed = cap.args.safeParse(args);
          if (!parsed.success) {
            expect(parsed.error.issues.length, name).toBeGreaterThan(0);
            for (const i of parsed.error.issues) expect(typeof i.message === 'string' && Array.isArray(i.path), name).toBe(true);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('through the broker: I-REQ-CAPABILITY-ARGS exactly when the schema or the JSON bounds refuse, else a valid answer', async () => {
    await fc.assert(
      fc.asyncProperty(seeds, async (seed) => {
        const r = rand(seed);
        const name = r.pick(SERVED);
        const args = randomArgs(r, argNames(CAPABILITIES.get(name)!.args));
        const text = JSON.stringify({ abi_version: 1, name, args });
        const res = ResponseEnvelopeSchema.parse(await host.call({ tool_id: 'a.req', input: bytesInput(text) }));
        expect(res.status, `${text}: ${res.error?.code} ${res.error?.message}`).toBe('success');
        const answer = CapabilityResponseSchema.parse((res.output as { answer: unknown }).answer);
        const violation = scanJsonText(text, { envelope: true });
        const refused = violation !== undefined || !CAPABILITIES.get(name)!.args.safeParse(args).success;
        if (refused) {
          const code = violation === undefined ? 'I-REQ-CAPABILITY-ARGS' : jsonRefusal(violation, 'capability', '').code;
          expect(answer, text).toMatchObject({ status: 'error', error: { code } });
          if (violation === undefined)
            expect(
              (answer as unknown as { error: { details: { violations: unknown[] } } }).error.details.violations.length,
              text,
            ).toBeGreaterThan(0);
        } else if (answer.status === 'error') {
          expect(answer.error.code, text).not.toBe('I-REQ-CAPABILITY-ARGS');
          expect(errorClassOf(answer.error.code), text).toBeDefined();
        }
      }),
      { numRuns: RUNS },
    );
    expect(await host.call({ tool_id: 'a.req', input: bytesInput('{"abi_version":1,"name":"clock.now_unix","args":{}}') })).toMatchObject({
      status: 'success',
    });
  }, 600_000);
});
