// A host that refuses to start, as the load checks read it: the P-PRECOND-MANIFEST-INVALID refusal's
// violation lines (`file:line: field: reason`), observed as evidence, and a search among them.
import type { CheckContext } from '../check.js';
import { expect } from '../expect.js';

/** The violation lines of a refusal's details. */
export function violationsOf(refusal: { details: Record<string, unknown> }): string[] {
  const v = refusal.details.violations;
  return Array.isArray(v) ? v.map(String) : [];
}

/** Starts the host expecting a P-PRECOND-MANIFEST-INVALID refusal; returns its violation lines (observed, each cut to 400 characters). */
export async function refusedWith(ctx: CheckContext): Promise<string[]> {
  const refusal = await ctx.refusedStart();
  expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID: ${refusal.message}`);
  const lines = violationsOf(refusal);
  ctx.observe(
    'violations',
    lines.map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l)),
  );
  return lines;
}

/** Fails unless some line matches every pattern. */
export function expectLine(lines: readonly string[], what: string, ...patterns: RegExp[]): void {
  expect(
    lines.some((l) => patterns.every((p) => p.test(l))),
    `no violation ${what} (${patterns.map(String).join(', ')}) among: ${JSON.stringify(lines).slice(0, 3000)}`,
  );
}
