// Budgets that grow with the data (abi/ABI.md, ABI-BUDGET-*): a call's fuel, capability calls and
// deadline are the tool's base plus its rate per MiB of input, under ceilings that grow by the
// policy's own rate, and a call whose input needs more than the ceiling is refused before it runs.
import {
  HelixError,
  MAX_TIMEOUT_MS,
  MIB,
  SCALED_FIGURES,
  scaledBudget,
  type EffectiveLimits,
  type InputRates,
  type Policy,
  type ScaledFigure,
  type ToolLimits,
} from '../../../abi/index.js';

/** The policy's per-MiB ceiling rates when it leaves them out (ABI-BUDGET-003). */
export const DEFAULT_CEILING_RATES: Required<{ [F in ScaledFigure]: number }> = {
  fuel: 1_000_000_000,
  maxCapabilityCalls: 64,
  timeoutMs: 2000,
};

/** The policy's ceiling rates per MiB of input, defaults filled in. */
export function ceilingRates(policy: Policy): Required<{ [F in ScaledFigure]: number }> {
  const r = policy.ceilings.perInputMiB ?? {};
  return {
    fuel: r.fuel ?? DEFAULT_CEILING_RATES.fuel,
    maxCapabilityCalls: r.maxCapabilityCalls ?? DEFAULT_CEILING_RATES.maxCapabilityCalls,
    timeoutMs: r.timeoutMs ?? DEFAULT_CEILING_RATES.timeoutMs,
  };
}

const WORDS: Record<ScaledFigure, string> = {
  fuel: 'a fuel budget',
  maxCapabilityCalls: 'a capability call budget',
  timeoutMs: 'a deadline (ms)',
};
const n = (x: number): string => x.toLocaleString('en-US', { maximumFractionDigits: 3 });

/**
 * The limits of a call that reads `inputBytes` of input (abi/limits.ts inputBytesOf), before the
 * request narrows them: each figure with a rate is `base + rate x MiB`. Throws
 * A-AUTH-BUDGET-CEILING, with the figures, when that is above the policy's ceiling for this input.
 */
export function scaledLimits(tool: ToolLimits, policy: Policy, policySource: string, toolId: string, inputBytes: number): EffectiveLimits {
  const { perInputMiB, ...base } = tool;
  if (perInputMiB === null || inputBytes === 0) return base;
  const ceilings = policy.ceilings;
  const cRates = ceilingRates(policy);
  const scaled: { -readonly [K in keyof EffectiveLimits]: number } = { ...base };
  for (const figure of SCALED_FIGURES) {
    const rate = perInputMiB[figure as keyof InputRates];
    if (rate === undefined) continue;
    const need = scaledBudget(base[figure], rate, inputBytes);
    const ceiling = scaledBudget(ceilings[figure], cRates[figure], inputBytes);
    if (need > ceiling)
      throw ceilingRefusal({
        toolId,
        figure,
        inputBytes,
        need,
        base: base[figure],
        rate,
        ceiling,
        ceilingBase: ceilings[figure],
        ceilingRate: cRates[figure],
        policySource,
      });
    scaled[figure] = figure === 'timeoutMs' ? Math.min(need, MAX_TIMEOUT_MS) : need;
  }
  return scaled;
}

interface Shortfall {
  readonly toolId: string;
  readonly figure: ScaledFigure;
  readonly inputBytes: number;
  readonly need: number;
  readonly base: number;
  readonly rate: number;
  readonly ceiling: number;
  readonly ceilingBase: number;
  readonly ceilingRate: number;
  readonly policySource: string;
}

function ceilingRefusal(s: Shortfall): HelixError {
  const mib = s.inputBytes / MIB;
  const field = `ceilings.perInputMiB.${s.figure}`;
  return new HelixError('A-AUTH-BUDGET-CEILING', {
    message:
      `"${s.toolId}" needs ${WORDS[s.figure]} of ${n(s.need)} for ${n(mib)} MiB of input (${n(s.base)} + ${n(s.rate)} per MiB); ` +
      `the policy ${s.policySource} allows at most ${n(s.ceiling)} for this input (ceilings.${s.figure} ${n(s.ceilingBase)} + ${field} ${n(s.ceilingRate)} per MiB).`,
    details: {
      tool_id: s.toolId,
      figure: s.figure,
      input_bytes: s.inputBytes,
      needed: s.need,
      base: s.base,
      per_input_mib: s.rate,
      ceiling: s.ceiling,
      ceiling_base: s.ceilingBase,
      ceiling_per_input_mib: s.ceilingRate,
      policy: s.policySource,
      policy_field: field,
    },
    hint: `Raise ${field} in the policy file to at least ${n(s.rate)} (and pass it with --policy), or call the tool on less data.`,
  });
}
