// Capability checkpoints: what a capability must remember the moment it happens, not when its run
// ends (a Slurm job's id, so that neither a replay nor a restart after a crash submits it again).
// Records live under [tool id, key], are written only by the host's capabilities (a guest has no
// path to them, unlike kv), and each put is its own transaction, committed when it resolves.
import { storeHandle, type Store } from './handle.js';
import { readRecord } from './records.js';

/** The checkpoint under `key` in the tool's namespace, or undefined when there is none. */
export function checkpointGet(store: Store, toolId: string, key: string): Record<string, unknown> | undefined {
  return readRecord(store, 'checkpoints', [toolId, key]);
}

/** Writes every entry under the tool's namespace in one transaction; committed when the promise resolves. */
export async function checkpointPut(
  store: Store,
  toolId: string,
  entries: Readonly<Record<string, Record<string, unknown>>>,
): Promise<void> {
  const { db } = storeHandle(store);
  await store.transaction(() => {
    for (const [key, value] of Object.entries(entries)) db.checkpoints.putSync([toolId, key], value);
  });
}

/**
 * The tools that hold a checkpoint under `key` (a job id's record is under the tool that
 * submitted it). A scan of the whole database: checkpoints are a few records per job.
 */
export function checkpointTools(store: Store, key: string): string[] {
  const tools: string[] = [];
  for (const k of storeHandle(store).db.checkpoints.getKeys()) {
    if (Array.isArray(k) && k[1] === key) tools.push(String(k[0]));
  }
  return tools;
}
