// What a fuel-exhausted call tells its author (ABI-BUDGET-006): the fuel it spent per MiB of the
// input it had read when it stopped, the manifest field that sets that rate, and the policy
// ceiling that caps it, so a tool on real data gets a budget that grows with the data.
import {
  GZIP_INPUT_FACTOR,
  MIB,
  type InputArtifactSize,
  type JournalEntry,
  type Policy,
  type ToolLimits,
  type WireError,
} from '../../../abi/index.js';
import { ceilingRates } from './budgets.js';

/** An input artifact of the call: its id and the sizes budgets count (abi/limits.ts inputBytesOf). */
export interface ShortfallInput extends InputArtifactSize {
  readonly id: string;
}

/** What the call knew when its fuel ran out. */
export interface ShortfallContext {
  readonly limits: ToolLimits;
  readonly policy: Policy;
  readonly policySource: string;
  readonly inputs: readonly ShortfallInput[];
  readonly journal: readonly JournalEntry[];
}

/** Headroom on a suggested rate: a quarter above what this call spent. */
const HEADROOM = 1.25;

const n = (x: number): string => x.toLocaleString('en-US', { maximumFractionDigits: 1 });

/** `x` rounded up to two significant digits: a rate an author can type. */
export function roundRateUp(x: number): number {
  if (x <= 0) return 0;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(x)) - 1);
  return Math.ceil(x / step) * step;
}

/**
 * The input bytes the guest had read when it stopped: per input artifact, the furthest end of an
 * `artifact.read` that answered, in the units budgets count (gzip pieces count decompressed bytes,
 * capped at GZIP_INPUT_FACTOR times the stored size), never more than the artifact counts for.
 */
export function inputBytesRead(inputs: readonly ShortfallInput[], journal: readonly JournalEntry[]): number {
  const furthest = new Map<string, number>();
  for (const e of journal) {
    if (e.name !== 'artifact.read' || e.outcome !== 'ok') continue;
    const args = e.args as { artifact_id?: unknown; offset?: unknown; length?: unknown };
    const result = e.result as { bytes?: unknown; next_offset?: unknown } | null;
    if (typeof args?.artifact_id !== 'string') continue;
    const offset = typeof args.offset === 'number' ? args.offset : 0;
    const end =
      typeof result?.next_offset === 'number'
        ? result.next_offset
        : offset + (typeof result?.bytes === 'number' ? result.bytes : typeof args.length === 'number' ? args.length : 0);
    furthest.set(args.artifact_id, Math.max(furthest.get(args.artifact_id) ?? 0, end));
  }
  let read = 0;
  for (const a of inputs) {
    const counted = a.size * (a.compression === 'gzip' ? GZIP_INPUT_FACTOR : 1);
    read += Math.min(furthest.get(a.id) ?? 0, counted);
  }
  return read;
}

/**
 * S-TOOL-FUEL-EXHAUSTED with the figures an author sizes a budget from. A call without input
 * artifacts keeps the engine's error with a hint about limits.fuel; one with input gets the fuel
 * per MiB it spent on what it read (or on the whole input when the journal shows no reads), the
 * rate to declare in limits.perInputMiB.fuel with headroom, and the policy's ceiling rate.
 */
export function explainFuelShortfall(error: WireError, ctx: ShortfallContext): WireError {
  const details = (error.details ?? {}) as Record<string, unknown>;
  const fuelUsed = typeof details.fuel_used === 'number' ? details.fuel_used : 0;
  const ceilingFuel = ctx.policy.ceilings.fuel;
  const inputBytes = ctx.inputs.reduce((s, a) => s + a.size * (a.compression === 'gzip' ? GZIP_INPUT_FACTOR : 1), 0);
  if (inputBytes === 0) {
    return {
      ...error,
      details: { ...details, manifest_field: 'limits.fuel', policy_field: 'ceilings.fuel', policy_ceiling: ceilingFuel },
      hint: `Send less work, or raise limits.fuel in the manifest (now ${n(ctx.limits.fuel)}); the policy ${ctx.policySource} caps it at ceilings.fuel ${n(ceilingFuel)}.`,
    };
  }
  const read = inputBytesRead(ctx.inputs, ctx.journal);
  const basis = read > 0 ? read : inputBytes;
  const perMiB = Math.ceil(fuelUsed / (basis / MIB));
  const suggested = roundRateUp(perMiB * HEADROOM);
  const declared = ctx.limits.perInputMiB?.fuel ?? null;
  const ceilingRate = ceilingRates(ctx.policy).fuel;
  const inputMiB = inputBytes / MIB;
  const readWords = read > 0 ? `the ${n(read / MIB)} MiB of input it read` : 'its input';
  const message =
    `${error.message.replace(/\.$/, '')} on ${n(inputMiB)} MiB of input: ${n(perMiB)} fuel per MiB of ${readWords}` +
    (declared === null
      ? '; the manifest declares no limits.perInputMiB.fuel.'
      : `; the manifest declares limits.perInputMiB.fuel ${n(declared)}.`);
  const raiseCeiling =
    suggested > ceilingRate
      ? `; that is above the policy's ceilings.perInputMiB.fuel, ${n(ceilingRate)}: raise it too (and pass the policy file with --policy)`
      : `; the policy ${ctx.policySource} allows up to ${n(ceilingRate)} per MiB (ceilings.perInputMiB.fuel)`;
  return {
    ...error,
    message,
    details: {
      ...details,
      input_bytes: inputBytes,
      input_bytes_read: read,
      fuel_per_input_mib: perMiB,
      suggested_per_input_mib: suggested,
      manifest_field: 'limits.perInputMiB.fuel',
      per_input_mib: declared,
      policy_field: 'ceilings.perInputMiB.fuel',
      policy_ceiling_per_input_mib: ceilingRate,
    },
    hint: `Set limits.perInputMiB.fuel in the manifest to about ${n(suggested)}, this call's rate and a quarter more${raiseCeiling}. \`helix test\` prints the rate of each fixture on a MiB of data or more.`,
  };
}
