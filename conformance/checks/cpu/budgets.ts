// CPU checks of budgets that grow with the input: fuel and deadlines per MiB of input artifacts as
// the manifest states, stopped at the policy's growing ceiling, lowered by a request, never raised;
// and input and output past their bounds refused (ABI-BUDGET-001..005, ABI-LIMIT-001).
import path from 'node:path';
import { MIB } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { runCli } from '../../kit/c-cpu-proc.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { checkDefaultPolicy } from '../../runner.js';
import { ARTIFACT_INPUT, BASE, details, importArtifacts, pack, RATE, SPIN } from './shared.js';

/** The sizing figures of a fuel-exhausted call of the spinning tool, which reads nothing (ABI-BUDGET-006). */
function expectShortfall(what: string, d: Record<string, unknown>, input: Record<string, unknown>): void {
  const withData = Object.keys(input).some((k) => k === 'data' || k === 'extra');
  if (!withData) {
    expect(
      d.manifest_field === 'limits.fuel' && d.policy_field === 'ceilings.fuel' && typeof d.policy_ceiling === 'number',
      `${what}: details name ${String(d.manifest_field)} and ${String(d.policy_field)}, not limits.fuel and ceilings.fuel`,
    );
    return;
  }
  const inputBytes = d.input_bytes as number;
  const want = Math.ceil((d.fuel_used as number) / (inputBytes / MIB));
  expect(
    d.manifest_field === 'limits.perInputMiB.fuel' && d.per_input_mib === RATE && d.policy_field === 'ceilings.perInputMiB.fuel',
    `${what}: details name ${String(d.manifest_field)} (${String(d.per_input_mib)}) and ${String(d.policy_field)}`,
  );
  expect(d.input_bytes_read === 0, `${what}: a tool that reads nothing read ${String(d.input_bytes_read)} bytes`);
  expect(d.fuel_per_input_mib === want, `${what}: fuel per input MiB ${String(d.fuel_per_input_mib)}, not ${want}`);
  expect(
    typeof d.suggested_per_input_mib === 'number' && d.suggested_per_input_mib >= want * 1.25,
    `${what}: suggested ${String(d.suggested_per_input_mib)} is not a quarter above ${want}`,
  );
}

/** The checks of this file, in the report's order. */
export const budgetChecks: readonly Check[] = [
  {
    id: 'cpu.budget-per-input-mib',
    title: 'Fuel grows with the input artifacts as the manifest states: per MiB, each reference, gzip eight times, inline params nothing',
    category: 'cpu',
    abi: ['ABI-BUDGET-001', 'ABI-BUDGET-002', 'ABI-BUDGET-006', 'ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `an endless loop with limits.fuel ${BASE} and perInputMiB.fuel ${RATE} runs out at ${BASE} without artifacts (and with 60 KB of inline params), ${BASE + RATE} with 1 MiB, ${BASE + 3 * RATE} with 3 MiB, ${BASE + 4 * RATE} with both referenced, and base + rate x 8 x stored size of a gzip artifact, rounded up; each error names the field to raise (limits.fuel and ceilings.fuel without artifacts; with them limits.perInputMiB.fuel ${RATE}, ceilings.perInputMiB.fuel, and the fuel per input MiB, nothing having been read: fuel_used / input MiB)`,
    packs: (engine) => [
      pack(engine, 'cpu.scaled', SPIN, {
        limits: { fuel: BASE, perInputMiB: { fuel: RATE } },
        inputSchema: ARTIFACT_INPUT,
        timeoutMs: 60_000,
      }),
    ],
    async run(ctx) {
      const a = await importArtifacts(ctx);
      const cases: [string, Record<string, unknown>, number][] = [
        ['no artifacts', { n: 1 }, BASE],
        ['60 KB inline', { pad: 'p'.repeat(60_000) }, BASE],
        ['1 MiB', { data: a.one }, BASE + RATE],
        ['3 MiB', { data: a.three }, BASE + 3 * RATE],
        ['1 MiB + 3 MiB', { data: a.one, extra: a.three }, BASE + 4 * RATE],
        ['the same 1 MiB twice', { data: a.one, extra: a.one }, BASE + 2 * RATE],
        ['gzip', { data: a.gz }, BASE + Math.ceil((RATE * 8 * a.gzSize) / MIB)],
      ];
      const seen: Record<string, unknown> = {};
      for (const [what, input, want] of cases) {
        const r = await ctx.call('cpu.scaled', input);
        seen[what] = details(r).fuel_limit;
        expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
        expect(details(r).fuel_limit === want, `${what}: ran under ${String(details(r).fuel_limit)} units, not ${want}`);
        expectShortfall(what, details(r), input);
      }
      ctx.observe('fuel_limit', seen);
      ctx.observe('gzip_stored_bytes', a.gzSize);
    },
  },
  {
    id: 'cpu.budget-ceiling',
    title: "A call whose input needs more fuel than the policy's growing ceiling allows is refused before it runs or is recorded",
    category: 'cpu',
    abi: ['ABI-BUDGET-003', 'ABI-BUDGET-004'],
    engines: ['helix', 'extism'],
    expected:
      'terminal_error A-AUTH-BUDGET-CEILING, run_id null, no run in the store, fuel_used 0; details figure fuel, input_bytes 3 MiB, needed 7,000,000, ceiling 5,000,000 (ceilings.fuel 2,000,000 + 1,000,000 per MiB), policy_field ceilings.perInputMiB.fuel; the same tool without data runs',
    policy: (_engine, env) => ({ ...checkDefaultPolicy(env), ceilings: { fuel: 2_000_000, perInputMiB: { fuel: 1_000_000 } } }),
    packs: (engine) => [
      pack(engine, 'cpu.needy', '', { limits: { fuel: BASE, perInputMiB: { fuel: RATE } }, inputSchema: ARTIFACT_INPUT }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const three = (await host.artifacts.importInline(Buffer.alloc(3 * MIB, 0x43))).id;
      const r = await ctx.call('cpu.needy', { data: three });
      expectOutcome(r, 'terminal_error', 'A-AUTH-BUDGET-CEILING');
      const d = details(r);
      ctx.observe('refusal', { message: r.error?.message, details: d, hint: r.error?.hint });
      expect(r.run_id === null, `the refused call has run id ${String(r.run_id)}`);
      expect(r.metrics.fuel_used === 0, `the refused call used ${r.metrics.fuel_used} fuel`);
      const want: Record<string, unknown> = {
        figure: 'fuel',
        input_bytes: 3 * MIB,
        needed: 7_000_000,
        base: BASE,
        per_input_mib: RATE,
        ceiling: 5_000_000,
        ceiling_base: 2_000_000,
        ceiling_per_input_mib: 1_000_000,
        policy_field: 'ceilings.perInputMiB.fuel',
      };
      for (const [k, v] of Object.entries(want))
        expect(JSON.stringify(d[k]) === JSON.stringify(v), `details.${k} is ${JSON.stringify(d[k])}, not ${JSON.stringify(v)}`);
      expect(typeof d.policy === 'string' && d.policy !== '', 'details.policy does not name the policy');
      expect(
        /7,000,000/.test(r.error!.message) && /5,000,000/.test(r.error!.message),
        `the message does not state the figure and the ceiling: ${r.error!.message}`,
      );
      const runs = host.runs.list({ toolId: 'cpu.needy' });
      expect(runs.length === 0, `the refused call left ${runs.length} run(s) in the store`);
      expectSuccess(await ctx.call('cpu.needy', { n: 1 }));
      expect(host.runs.list({ toolId: 'cpu.needy' }).length === 1, 'the call without data was not recorded as one run');
    },
  },
  {
    id: 'cpu.budget-request-lowers',
    title: 'A grown deadline is lowered by the request, never raised; `helix tools --json` shows the base figures and rates',
    category: 'cpu',
    abi: ['ABI-BUDGET-005', 'ABI-BUDGET-001', 'ABI-DEADLINE-001'],
    engines: ['helix'],
    expected:
      'an endless loop with timeoutMs 200 and perInputMiB.timeoutMs 900 ends R-TIMEOUT-001 with details.timeout_ms 1,100 on 1 MiB, 700 when the request asks 700, 1,100 when it asks 60,000; `helix tools --json` (child process) lists the tool with limits.perInputMiB {timeoutMs: 900} and a built-in with perInputMiB null',
    packs: (engine) => [
      pack(engine, 'cpu.slow', SPIN, {
        timeoutMs: 200,
        limits: { fuel: 1e10, perInputMiB: { timeoutMs: 900 } },
        inputSchema: ARTIFACT_INPUT,
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const one = (await host.artifacts.importInline(Buffer.alloc(MIB, 0x41))).id;
      const grown = await ctx.call('cpu.slow', { data: one });
      expectOutcome(grown, 'retryable_error', 'R-TIMEOUT-001');
      const lowered = await ctx.call('cpu.slow', { data: one }, { request: { constraints: { timeout_ms: 700 } } });
      const raised = await ctx.call('cpu.slow', { data: one }, { request: { constraints: { timeout_ms: 60_000 } } });
      ctx.observe('timeout_ms', {
        grown: details(grown).timeout_ms,
        lowered: details(lowered).timeout_ms,
        raised: details(raised).timeout_ms,
      });
      expect(details(grown).timeout_ms === 1100, `on 1 MiB the deadline was ${String(details(grown).timeout_ms)}, not 200 + 900`);
      expect(details(lowered).timeout_ms === 700, `the request's 700 ms gave ${String(details(lowered).timeout_ms)}`);
      expect(
        details(raised).timeout_ms === 1100,
        `the request's 60,000 ms gave ${String(details(raised).timeout_ms)}, above the grown 1,100`,
      );
      const cli = await runCli(
        ctx,
        ['tools', '--json', '--toolpacks', await ctx.toolpacksDir(), '--policy', path.join(ctx.env.dir, 'policy.yaml')],
        path.join(ctx.env.dir, 'cli-home'),
      );
      expect(cli.code === 0, `helix tools --json exited ${cli.code}: ${cli.stderr.slice(-500)}`);
      const rows = JSON.parse(cli.stdout) as Array<{ id: string; limits?: Record<string, unknown> }>;
      const slow = rows.find((t) => t.id === 'cpu.slow');
      const builtin = rows.find((t) => t.id === 'helix.artifact_list');
      ctx.observe('tools_json', { 'cpu.slow': slow?.limits, 'helix.artifact_list': builtin?.limits });
      expect(
        JSON.stringify(slow?.limits?.perInputMiB) === JSON.stringify({ timeoutMs: 900 }),
        `helix tools --json shows perInputMiB ${JSON.stringify(slow?.limits?.perInputMiB)}`,
      );
      expect(
        builtin !== undefined && builtin.limits?.perInputMiB === null,
        `a built-in shows perInputMiB ${JSON.stringify(builtin?.limits?.perInputMiB)}, not null`,
      );
    },
  },
  {
    id: 'cpu.input-output-bounds',
    title:
      'Input past the smaller of the manifest and policy bound is refused before dispatch; output past maxOutputBytes before it is decoded',
    category: 'cpu',
    abi: ['ABI-LIMIT-001'],
    engines: ['helix', 'extism'],
    expected:
      'with manifest maxInputBytes 4,096 and policy ceilings.maxInputBytes 1,024: 1,500 bytes of input are invalid_request I-REQ-INPUT-SIZE with no run and no fuel, 600 bytes run; a module answering 100,000 bytes under maxOutputBytes 65,536 ends terminal_error S-TOOL-OUTPUT-TOO-LARGE',
    policy: (_engine, env) => ({ ...checkDefaultPolicy(env), ceilings: { maxInputBytes: 1024 } }),
    packs: (engine) => {
      return [
        pack(engine, 'cpu.small_input', '', { limits: { maxInputBytes: 4096 } }),
        engine.pack('cpu.big_output', engine.guests.oversized(100_000), { limits: { ...DEFAULT_LIMITS, maxInputBytes: 1024 } }),
      ];
    },
    async run(ctx) {
      const over = await ctx.call('cpu.small_input', { pad: 'x'.repeat(1500) });
      expectOutcome(over, 'invalid_request', 'I-REQ-INPUT-SIZE');
      expect(
        over.run_id === null && over.metrics.fuel_used === 0,
        `the refused input ran: run ${String(over.run_id)}, fuel ${over.metrics.fuel_used}`,
      );
      ctx.observe('over', { message: over.error?.message, details: over.error?.details });
      expectSuccess(await ctx.call('cpu.small_input', { pad: 'x'.repeat(600) }));
      const out = await ctx.call('cpu.big_output', { n: 1 });
      ctx.observe('big_output', { code: out.error?.code, message: out.error?.message, details: out.error?.details });
      expectOutcome(out, 'terminal_error', 'S-TOOL-OUTPUT-TOO-LARGE');
    },
  },
];
