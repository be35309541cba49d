// The capability calls of a run that received a `forbidden` answer (A-AUTH-FORBIDDEN), grouped by
// capability: what `helix test` fails a fixture on unless it expects them (sdk-guest/GUIDE.md,
// "Fixtures"). The calls and their reasons are the ones `helix runs show` lists (host/4-calls/runs/refusals.ts).
import type { HostRuns } from '../../5-host/host-records.js';

/** One refused capability: its name as the guest sent it, how often, and the broker's reason. */
export interface RefusedCapability {
  readonly capability: string;
  readonly calls: number;
  readonly reason: string;
}

const FORBIDDEN = 'A-AUTH-FORBIDDEN';

/** The capabilities the run `runId` was answered `forbidden` for, in the order first refused. */
export function forbiddenCalls(runs: HostRuns, runId: string): RefusedCapability[] {
  const grouped = new Map<string, { calls: number; reason: string }>();
  for (const call of runs.refusedCalls(runId)) {
    if (call.code !== FORBIDDEN) continue;
    const name = call.capability ?? '(unnamed)';
    const seen = grouped.get(name);
    if (seen === undefined) grouped.set(name, { calls: 1, reason: call.reason });
    else seen.calls++;
  }
  return [...grouped].map(([capability, { calls, reason }]) => ({ capability, calls, reason }));
}
