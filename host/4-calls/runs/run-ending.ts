// How a run that executed ends up in the store: its result checked against the declared outputs
// and sealed (secrets redacted), the input a guest saw kept for `helix verify`, and its log,
// output artifacts, capability journal and audit records committed inside the run's finishing
// transaction.
import { HelixError, type CallMetrics, type RunEvent, type RunLink, type RunResult } from '../../../abi/index.js';
import { commitArtifact } from '../artifacts/index.js';
import type { RunEffects } from '../broker/broker.js';
import { writeJournal } from '../broker/journal.js';
import { appendAudit } from '../../3-store/audit.js';
import { commitBlob, discardBlob, writeChunks } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';
import { buildRunLog } from './run-log.js';
import type { RunFinisher } from './run-store.js';

/** What a tool's execution left for its run to record. */
export interface ExecutedRun {
  readonly runId: string;
  readonly callId: string;
  readonly toolId: string;
  readonly toolVersion: string;
  /** The result as the tool's contract reads it: output validated, guest errors classed. */
  readonly result: RunResult;
  readonly metrics: CallMetrics;
  /** Journal, sealed outputs and log of a guest that could call capabilities. */
  readonly effects: RunEffects | undefined;
  /** The input a guest saw, kept content-addressed so `helix verify` can run the call again; none for a built-in. */
  readonly guestInput: Uint8Array | undefined;
  /** SHA-256 of the guest's output bytes, when it produced output. */
  readonly outputSha256: string | undefined;
  /** The run's events not yet in the store, for its log (the coordinator's ExecuteRun). */
  readonly unstoredEvents?: () => RunEvent[];
}

/**
 * Writes what can be written before the run's finishing transaction (the input's and the log's
 * chunks, deferred) and returns the finish that transaction applies: commit those, commit the
 * outputs of a succeeded run (a failed run's outputs go to gc, ABI-STORE-050), write the journal.
 * Its `abandon`, for a run another process recorded first, gives the outputs up to gc likewise.
 */
export async function prepareRunEnding(store: Store, now: () => number, run: ExecutedRun): Promise<RunFinisher> {
  const { effects } = run;
  let result = run.result;
  if (effects !== undefined && result.status === 'success' && effects.outputProblems.length > 0) {
    const err = new HelixError('C-CONTRACT-DECLARED-OUTPUTS', {
      message: `The run of "${run.toolId}" did not create exactly its declared outputs: ${effects.outputProblems.join('; ')}.`,
      details: { problems: effects.outputProblems },
    });
    result = { status: 'terminal_error', error: err.toWire(), warnings: [] };
  }
  if (effects !== undefined) result = effects.seal(result);
  const succeeded = result.status === 'success';
  const inputBlob =
    run.guestInput === undefined ? undefined : await writeChunks(store, once(run.guestInput), Number.MAX_SAFE_INTEGER, { defer: true });
  const log = await buildRunLog(store, run.runId, {
    unstoredEvents: run.unstoredEvents,
    call_id: run.callId,
    tool_id: run.toolId,
    tool_version: run.toolVersion,
    result,
    metrics: run.metrics,
    lines: effects?.log ?? [],
    dropped: effects?.logDropped ?? 0,
  });
  const discardOutputs = (): void => {
    for (const o of effects?.outputs ?? []) discardBlob(store, o.prepared.blob);
  };
  // The run's decisions happened whether or not its record stands: audited either way.
  const writeAudit = (): void => {
    for (const a of effects?.audit ?? []) appendAudit(store, a.at, a.record);
  };
  const abandon = (): void => {
    discardOutputs();
    writeAudit();
  };
  const finish = () => {
    if (inputBlob !== undefined) commitBlob(store, inputBlob);
    const outputs: RunLink[] = succeeded
      ? (effects?.outputs ?? []).map((o) => ({
          role: o.role,
          artifact_id: commitArtifact(store, o.prepared, now(), o.id).id,
          sha256: o.prepared.blob.sha256,
        }))
      : [];
    if (!succeeded) discardOutputs();
    writeAudit();
    if (effects !== undefined) writeJournal(store, run.runId, effects.journal);
    return {
      status: succeeded ? 'succeeded' : 'failed',
      result,
      metrics: run.metrics,
      outputs,
      log_artifact_id: log.commit(),
      input_sha256: inputBlob?.sha256 ?? null,
      output_sha256: succeeded && run.outputSha256 !== undefined ? (effects?.outputDigest(run.outputSha256) ?? run.outputSha256) : null,
      journal: { entries: effects?.journal.length ?? 0, head: effects?.journalHead ?? null },
    } as const;
  };
  return Object.assign(finish, { abandon });
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}
