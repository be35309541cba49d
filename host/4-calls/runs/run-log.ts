// The JSONL log artifact of a run (the `log` role is produced by the host): what the
// run was, how it ended, and (once capabilities land) the guest's log lines. Its bytes are
// stored before the finishing transaction; the artifact becomes visible inside it.
import type { CallMetrics, RunEvent, RunResult } from '../../../abi/index.js';
import { commitArtifact, prepareArtifact } from '../artifacts/index.js';
import type { Store } from '../../3-store/open-store.js';
import { runEvents } from './run-store.js';

/** What the log records about the call that ended the run. */
export interface RunLogSummary {
  /** The guest's own lines (log.emit), already scrubbed of secrets. */
  readonly lines?: ReadonlyArray<{ at: number; level: string; event: string; fields: Record<string, unknown> }>;
  /** Lines the guest emitted past the per-run limit. */
  readonly dropped?: number;
  /** Events of the run not yet in the store (a start not yet committed, ABI-STORE-034). */
  readonly unstoredEvents?: () => RunEvent[];
  readonly call_id: string;
  readonly tool_id: string;
  readonly tool_version: string;
  readonly result: RunResult;
  readonly metrics: CallMetrics;
}

/** Largest log a run keeps; the summary lines stay far below it. */
const MAX_LOG_BYTES = 16 * 1024 * 1024;

/** Stores the log's bytes; `commit()` (inside the finishing transaction) makes it visible and returns its id. */
export async function buildRunLog(store: Store, runId: string, summary: RunLogSummary): Promise<{ commit: () => string }> {
  const lines = [
    ...[...runEvents(store, runId), ...(summary.unstoredEvents?.() ?? [])].map((e) => ({ at: e.at, event: e.kind, ...e.detail })),
    ...(summary.lines ?? []).map((l) => ({ at: l.at, level: l.level, event: `guest.${l.event}`, fields: l.fields })),
    ...(summary.dropped ? [{ at: Date.now(), event: 'guest.log_truncated', dropped: summary.dropped }] : []),
    {
      at: Date.now(),
      event: 'result',
      call_id: summary.call_id,
      tool: `${summary.tool_id}@${summary.tool_version}`,
      status: summary.result.status,
      code: summary.result.error?.code ?? null,
      ...summary.metrics,
    },
  ];
  const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
  async function* source(): AsyncGenerator<Uint8Array> {
    yield new TextEncoder().encode(text);
  }
  const prepared = await prepareArtifact(store, source(), {
    maxBytes: MAX_LOG_BYTES,
    label: `log of ${runId}`,
    type: 'jsonl',
    source: { kind: 'run', run_id: runId, role: 'log' },
    createdByRun: runId,
    // A run's log is small: its bytes go in with the run's finishing transaction.
    deferChunks: true,
  });
  return { commit: () => commitArtifact(store, prepared).id };
}
