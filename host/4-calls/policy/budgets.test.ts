// Budgets that grow with the data (ABI-BUDGET-*): base plus rate per MiB of input, under ceilings
// that grow by the policy's rate, refused with the figures when the input needs more, and only
// lowered by a request.
import { describe, expect, it } from 'vitest';
import {
  GZIP_INPUT_FACTOR,
  HelixError,
  inputBytesOf,
  MAX_TIMEOUT_MS,
  MIB,
  PolicySchema,
  scaledBudget,
  ToolManifestSchema,
  type PolicyInput,
} from '../../../abi/index.js';
import { DEFAULT_CEILING_RATES, scaledLimits } from './budgets.js';
import { callLimits, toolLimits } from './rules.js';

const manifest = ToolManifestSchema.parse({
  id: 'seq.stats',
  version: '1.0.0',
  contractVersion: 'v1',
  description: 'x',
  abi: 'helix/v1',
  module: 'm.wasm',
  digest: `sha256:${'0'.repeat(64)}`,
  deterministic: 'idempotent',
  timeoutMs: 10_000,
  limits: {
    maxInputBytes: 4096,
    maxOutputBytes: 4096,
    fuel: 1_000_000,
    maxCapabilityCalls: 10,
    perInputMiB: { fuel: 30_000_000, maxCapabilityCalls: 1.5, timeoutMs: 200 },
  },
  inputSchema: { type: 'object' },
  outputSchema: {},
});

const policyOf = (ceilings: PolicyInput['ceilings'] = {}) => PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, ceilings });
const limitsFor = (bytes: number, ceilings?: PolicyInput['ceilings']) => {
  const policy = policyOf(ceilings);
  return scaledLimits(toolLimits(policy, manifest), policy, 'p.yaml', manifest.id, bytes);
};

describe('budgets per MiB of input', () => {
  it('add the rate per MiB of input to the base of each figure that has one', () => {
    expect(limitsFor(0)).toMatchObject({ fuel: 1_000_000, maxCapabilityCalls: 10, timeoutMs: 10_000 });
    expect(limitsFor(MIB)).toMatchObject({ fuel: 31_000_000, maxCapabilityCalls: 12, timeoutMs: 10_200 });
    expect(limitsFor(100 * MIB)).toMatchObject({ fuel: 3_001_000_000, maxCapabilityCalls: 160, timeoutMs: 30_000 });
    // Part of a MiB counts in proportion, rounded up to a whole unit.
    expect(limitsFor(MIB / 2)).toMatchObject({ fuel: 16_000_000, maxCapabilityCalls: 11, timeoutMs: 10_100 });
    // Figures without a rate do not move.
    expect(limitsFor(100 * MIB)).toMatchObject({ maxMemoryPages: 1024, maxOutputBytes: 4096, maxInputBytes: 4096 });
  });

  it('reach 4 GiB of input under the default ceilings', () => {
    const l = limitsFor(4 * 1024 * MIB);
    expect(l.fuel).toBe(1_000_000 + 4096 * 30_000_000);
    expect(l.timeoutMs).toBe(10_000 + 4096 * 200);
  });

  it('count each referenced artifact, and a gzip artifact as GZIP_INPUT_FACTOR times its stored size', () => {
    expect(inputBytesOf([])).toBe(0);
    expect(
      inputBytesOf([
        { size: 10, compression: null },
        { size: 10, compression: null },
      ]),
    ).toBe(20);
    expect(inputBytesOf([{ size: MIB, compression: 'gzip' }])).toBe(GZIP_INPUT_FACTOR * MIB);
  });

  it('leave a tool without rates as it was, whatever its input', () => {
    const policy = policyOf();
    const plain = toolLimits(
      policy,
      ToolManifestSchema.parse({ ...manifest, limits: { maxInputBytes: 4096, maxOutputBytes: 4096, fuel: 5 } }),
    );
    expect(plain.perInputMiB).toBeNull();
    expect(scaledLimits(plain, policy, 'p.yaml', 'x.y', 1000 * MIB)).toMatchObject({ fuel: 5, timeoutMs: 10_000 });
  });

  it('bound the budget by the ceiling that grows by the policy rate, and refuse with the figures when the input needs more', () => {
    // Ceiling 2,000,000 + 20,000,000 per MiB: 1 MiB needs 31,000,000 and may have 22,000,000.
    const refuse = (): unknown => limitsFor(MIB, { fuel: 2_000_000, perInputMiB: { fuel: 20_000_000 } });
    expect(refuse).toThrow(HelixError);
    try {
      refuse();
    } catch (err) {
      const e = err as HelixError;
      expect(e.code).toBe('A-AUTH-BUDGET-CEILING');
      expect(e.message).toBe(
        '"seq.stats" needs a fuel budget of 31,000,000 for 1 MiB of input (1,000,000 + 30,000,000 per MiB); the policy p.yaml allows at most 22,000,000 for this input (ceilings.fuel 2,000,000 + ceilings.perInputMiB.fuel 20,000,000 per MiB).',
      );
      expect(e.details).toMatchObject({
        figure: 'fuel',
        input_bytes: MIB,
        needed: 31_000_000,
        ceiling: 22_000_000,
        policy_field: 'ceilings.perInputMiB.fuel',
      });
      expect(e.hint).toBe(
        'Raise ceilings.perInputMiB.fuel in the policy file to at least 30,000,000 (and pass it with --policy), or call the tool on less data.',
      );
    }
    // Raising the policy's rate lets the same input through; so does no input at all.
    expect(limitsFor(MIB, { fuel: 2_000_000, perInputMiB: { fuel: 30_000_000 } }).fuel).toBe(31_000_000);
    expect(limitsFor(0, { fuel: 2_000_000, perInputMiB: { fuel: 1 } }).fuel).toBe(1_000_000);
  });

  it('name the figure that is short: capability calls and the deadline too', () => {
    expect(() => limitsFor(10 * MIB, { maxCapabilityCalls: 10, perInputMiB: { maxCapabilityCalls: 1 } })).toThrow(
      /capability call budget of 25 for 10 MiB/,
    );
    expect(() => limitsFor(10 * MIB, { timeoutMs: 10_000, perInputMiB: { timeoutMs: 100 } })).toThrow(/ceilings\.perInputMiB\.timeoutMs/);
  });

  it('apply the default ceiling rates when the policy leaves them out', () => {
    const greedy = ToolManifestSchema.parse({
      ...manifest,
      limits: { ...manifest.limits, perInputMiB: { fuel: DEFAULT_CEILING_RATES.fuel * 2 } },
    });
    const policy = policyOf();
    expect(() => scaledLimits(toolLimits(policy, greedy), policy, '(default)', 'seq.stats', 100 * MIB)).toThrow(
      /ceilings\.perInputMiB\.fuel 1,000,000,000 per MiB/,
    );
  });

  it('let a request lower the scaled deadline, never raise it, and keep it within 24 hours', () => {
    const scaled = limitsFor(100 * MIB);
    expect(callLimits(scaled, { timeoutMs: 2000 }, 0).timeoutMs).toBe(2000);
    expect(callLimits(scaled, { timeoutMs: 10_000_000 }, 0).timeoutMs).toBe(30_000);
    const slow = ToolManifestSchema.parse({ ...manifest, limits: { ...manifest.limits, perInputMiB: { timeoutMs: 1000 } } });
    const policy = policyOf({ timeoutMs: 86_400_000, perInputMiB: { timeoutMs: 1000 } });
    expect(scaledLimits(toolLimits(policy, slow), policy, 'p.yaml', 'x.y', 200 * 1024 * MIB).timeoutMs).toBe(MAX_TIMEOUT_MS);
  });

  it('compute the same figures for the same input every time', () => {
    expect(scaledBudget(7, 0.25, 3 * MIB)).toBe(8);
    expect(scaledBudget(7, undefined, 3 * MIB)).toBe(7);
    expect(limitsFor(123_456_789)).toEqual(limitsFor(123_456_789));
  });
});
