// The limits one call runs under, once the manifest, the policy's ceilings, the call's input
// artifacts and the request have been combined (host/4-calls/policy/rules.ts computes them): the
// vocabulary the loader, the tools and the engine share, and the arithmetic of budgets that grow
// with the data (ABI-BUDGET-*).

/** The limits a call runs under. */
export interface EffectiveLimits {
  readonly fuel: number;
  readonly maxMemoryPages: number;
  readonly timeoutMs: number;
  readonly maxInputBytes: number;
  readonly maxOutputBytes: number;
  readonly maxCapabilityCalls: number;
}

/** What a budget grows by per MiB of input (ABI-BUDGET-001); a figure left out does not grow. */
export interface InputRates {
  readonly fuel?: number | undefined;
  readonly maxCapabilityCalls?: number | undefined;
  readonly timeoutMs?: number | undefined;
}

/** A tool's limits before a call: the base figures capped by the policy, and what they grow by per MiB of input. */
export interface ToolLimits extends EffectiveLimits {
  /** The manifest's `limits.perInputMiB`, or null when its budgets do not grow with the data. */
  readonly perInputMiB: InputRates | null;
}

/** The figures that can grow with the data. */
export const SCALED_FIGURES = ['fuel', 'maxCapabilityCalls', 'timeoutMs'] as const;
export type ScaledFigure = (typeof SCALED_FIGURES)[number];

/** One MiB: the unit per-input rates are stated in. */
export const MIB = 1024 * 1024;

/**
 * How many stored bytes of a gzip artifact count as one byte of input (ABI-BUDGET-002): the host
 * does not know the decompressed size before the tool has read it all, and FASTQ and FASTA
 * shrink about 3 to 5 times under gzip, so 8 covers them with room.
 */
export const GZIP_INPUT_FACTOR = 8;

/** The longest deadline any call gets, however much data it reads: 24 hours. */
export const MAX_TIMEOUT_MS = 86_400_000;

/** What one input artifact of a call counts for (ABI-BUDGET-002). */
export interface InputArtifactSize {
  readonly size: number;
  readonly compression: 'gzip' | null;
}

/** The input bytes of a call: each artifact its params reference, once per reference; gzip counts GZIP_INPUT_FACTOR times its stored size. */
export function inputBytesOf(artifacts: readonly InputArtifactSize[]): number {
  return artifacts.reduce((sum, a) => sum + a.size * (a.compression === 'gzip' ? GZIP_INPUT_FACTOR : 1), 0);
}

/** `base + rate x input MiB`, rounded up to a whole unit (ABI-BUDGET-001); the rate of a figure that does not grow is 0. */
export function scaledBudget(base: number, perMiB: number | undefined, inputBytes: number): number {
  if (perMiB === undefined || perMiB === 0 || inputBytes === 0) return base;
  return Math.min(Number.MAX_SAFE_INTEGER, base + Math.ceil(perMiB * (inputBytes / MIB)));
}
