// Budgets that grow with the data, end to end (abi/ABI.md ABI-BUDGET-*): real toolpacks on a real
// Host and store, the fuel a call runs under read back from its fuel-exhaustion error and its run
// record, the policy's ceilings, the request's lowering, the run identity and `helix tools --json`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIB, ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { stormGuest } from './helpers/catching-guests.js';
import { fixedOutputModule, numberResultModule } from './helpers/guest-wat.js';
import { runCli } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const BASE = 1_000_000;
const RATE = 2_000_000;
const INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    data: { type: 'string', 'x-helix-artifact': true },
    extra: { type: 'string', 'x-helix-artifact': true },
    n: { type: 'integer' },
  },
};
const limits = {
  maxInputBytes: 4096,
  maxOutputBytes: 4096,
  fuel: BASE,
  maxMemoryPages: 16,
  perInputMiB: { fuel: RATE, maxCapabilityCalls: 1, timeoutMs: 500 },
};
// Spins until its fuel runs out: the error says the budget it ran under.
const SPIN = '(loop $l (br $l)) (i64.const 0)';

let plugins: { dir: string; cleanup: () => void };
const home = tempDir('helix-budgets-home-');
const strictHome = tempDir('helix-budgets-strict-');
let host: Host;
let strict: Host;
const ids: Record<string, string> = {};

const call = async (
  h: Host,
  tool: string,
  input: Record<string, unknown>,
  constraints: Record<string, unknown> = {},
): Promise<ResponseEnvelope> => ResponseEnvelopeSchema.parse(await h.call({ tool_id: tool, input, constraints }));
const fuelLimit = (r: ResponseEnvelope): unknown => (r.error?.details as { fuel_limit?: unknown } | undefined)?.fuel_limit;

beforeAll(async () => {
  plugins = await toolpacksDir([
    { id: 'b.spin', module: numberResultModule(SPIN), manifest: { timeoutMs: 60_000, limits }, inputSchema: INPUT },
    { id: 'b.ok', module: fixedOutputModule('{"status":"ok","output":{}}'), manifest: { limits }, inputSchema: INPUT },
    {
      id: 'b.slow',
      module: numberResultModule(SPIN),
      manifest: { timeoutMs: 200, limits: { ...limits, fuel: 1e15, perInputMiB: { timeoutMs: 900 } } },
      inputSchema: INPUT,
    },
    {
      id: 'b.storm',
      module: stormGuest(1000),
      manifest: {
        limits: { ...limits, maxCapabilityCalls: 2, perInputMiB: { maxCapabilityCalls: 1 } },
        capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
      },
      inputSchema: INPUT,
    },
  ]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
  // An operator's policy whose ceiling grows by less than b.spin's rate: 3 MiB need 7,000,000 and
  // may have 2,000,000 + 3 x 1,000,000 = 5,000,000.
  const policyFile = path.join(strictHome.dir, 'strict.policy.yaml');
  writeFileSync(policyFile, "version: 1\ntools: { allow: ['*'] }\nceilings: { fuel: 2000000, perInputMiB: { fuel: 1000000 } }\n");
  strict = await createHost({ toolpacksDir: plugins.dir, home: strictHome.dir, policyFile });
  const mib = Buffer.alloc(MIB, 0x41);
  ids.one = (await host.artifacts.importInline(mib, { label: 'one MiB' })).id;
  ids.oneAgain = (await host.artifacts.importInline(mib, { label: 'the same bytes again' })).id;
  ids.three = (await host.artifacts.importInline(Buffer.alloc(3 * MIB, 0x43), { label: 'three MiB' })).id;
  const gz = gzipSync(Buffer.alloc(MIB, 0x47));
  const gzRecord = await host.artifacts.importInline(gz, { label: 'gzip' });
  ids.gz = gzRecord.id;
  ids.gzSize = String(gzRecord.size);
  ids.gzCompression = String(gzRecord.compression);
  ids.strictThree = (await strict.artifacts.importInline(Buffer.alloc(3 * MIB, 0x43))).id;
}, 120_000);
afterAll(async () => {
  await host?.close();
  await strict?.close();
  plugins?.cleanup();
  home.cleanup();
  strictHome.cleanup();
});

describe('budgets per MiB of input', () => {
  it('grow the fuel by the rate per MiB of the referenced artifacts, each reference counted', async () => {
    expect(fuelLimit(await call(host, 'b.spin', { n: 1 }))).toBe(BASE);
    expect(fuelLimit(await call(host, 'b.spin', { data: ids.one }))).toBe(BASE + RATE);
    expect(fuelLimit(await call(host, 'b.spin', { data: ids.three }))).toBe(BASE + 3 * RATE);
    expect(fuelLimit(await call(host, 'b.spin', { data: ids.one, extra: ids.three }))).toBe(BASE + 4 * RATE);
  });

  it('count a gzip artifact as eight times its stored size', async () => {
    expect(ids.gzCompression).toBe('gzip');
    const r = await call(host, 'b.spin', { data: ids.gz });
    expect(fuelLimit(r)).toBe(BASE + Math.ceil(RATE * ((8 * Number(ids.gzSize)) / MIB)));
  });

  it('record the scaled fuel in the run identity, stable for the same bytes under another artifact id', async () => {
    const first = await call(host, 'b.ok', { data: ids.one });
    expect(first.status).toBe('success');
    const again = await call(host, 'b.ok', { data: ids.oneAgain });
    expect(again.run_id).toBe(first.run_id);
    expect(again.warnings.some((w) => w.startsWith('replayed:'))).toBe(true);
    expect(host.runs.show(first.run_id!).params).toMatchObject({ limits: { fuel: BASE + RATE } });
    // helix verify re-runs it under the recorded (grown) budget.
    expect((await host.runs.verify(first.run_id!)).match).toBe(true);
    const bigger = await call(host, 'b.ok', { data: ids.three });
    expect(bigger.run_id).not.toBe(first.run_id);
    expect(host.runs.show(bigger.run_id!).params).toMatchObject({ limits: { fuel: BASE + 3 * RATE } });
  });

  it("refuse before running, with the figures and the policy field to raise, when the input needs more than the policy's ceiling", async () => {
    const r = await call(strict, 'b.ok', { data: ids.strictThree });
    expect(r.status).toBe('terminal_error');
    expect(r.run_id).toBeNull();
    expect(r.error).toMatchObject({
      code: 'A-AUTH-BUDGET-CEILING',
      details: { figure: 'fuel', input_bytes: 3 * MIB, needed: 7_000_000, ceiling: 5_000_000, policy_field: 'ceilings.perInputMiB.fuel' },
    });
    expect(r.error!.message).toContain('"b.ok" needs a fuel budget of 7,000,000 for 3 MiB of input (1,000,000 + 2,000,000 per MiB)');
    expect(r.error!.message).toContain(
      'allows at most 5,000,000 for this input (ceilings.fuel 2,000,000 + ceilings.perInputMiB.fuel 1,000,000 per MiB)',
    );
    expect(r.error!.hint).toContain('Raise ceilings.perInputMiB.fuel in the policy file to at least 2,000,000');
    // Without data the same tool runs under the same policy.
    expect((await call(strict, 'b.ok', { n: 1 })).status).toBe('success');
  });

  it("grow the deadline with the data, and let the request's timeout lower it, never raise it", async () => {
    // b.slow may take 200 ms + 900 ms per MiB and never stops on its own: the error names the deadline it ran under.
    const lowered = await call(host, 'b.slow', { data: ids.one }, { timeout_ms: 700 });
    expect(lowered.error).toMatchObject({ code: 'R-TIMEOUT-001', details: { timeout_ms: 700 } });
    const base = await call(host, 'b.slow', { n: 3 }, { timeout_ms: 700 });
    expect(base.error).toMatchObject({ code: 'R-TIMEOUT-001', details: { timeout_ms: 200 } });
  });

  it('grow the capability call budget with the data', async () => {
    expect(await call(host, 'b.storm', { n: 4 })).toMatchObject({
      error: { code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 2 } },
    });
    expect(await call(host, 'b.storm', { data: ids.three })).toMatchObject({
      error: { code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 5 } },
    });
  });

  it('show the rates in `helix tools --json`', async () => {
    const out = await runCli(['tools', '--json', '--toolpacks', plugins.dir], home.dir);
    expect(out.code).toBe(0);
    const rows = JSON.parse(out.stdout) as Array<{ id: string; limits: Record<string, unknown> }>;
    expect(rows.find((t) => t.id === 'b.spin')?.limits).toMatchObject({
      fuel: BASE,
      perInputMiB: { fuel: RATE, maxCapabilityCalls: 1, timeoutMs: 500 },
    });
    expect(rows.find((t) => t.id === 'helix.artifact_list')?.limits).toMatchObject({ perInputMiB: null });
  });
});
