// What the fuzz checks share: each sample is generated once per process from fixed seeds, tallied
// for the evidence, and shown in part in the report.
import type { CheckContext } from '../../check.js';
import { decode } from '../../kit/fuzz-oracles.js';

/** UTF-8 bytes of a text. */
export const encoder = new TextEncoder();

/** Counts of a list of labels, for the evidence. */
export function tally(labels: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[l] = (out[l] ?? 0) + 1;
  return out;
}

/** Memoized per process: the sample is the same on every run, so each is generated once. */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
}

/** Shows a few of a sample's cases in the report. */
export function showSample(ctx: CheckContext, label: string, lines: readonly string[]): void {
  ctx.show({ label, lang: 'text', text: lines.join('\n') });
}

/** A case for the report: its text when it is printable UTF-8, else its hex. */
export const hex = (b: Uint8Array): string => {
  const t = decode(b);
  // Text without control characters is shown as it is; anything else as hex.
  const printable = t !== undefined && [...t].every((c) => c.charCodeAt(0) >= 0x20);
  return printable ? t : `hex ${Buffer.from(b).toString('hex')}`;
};
