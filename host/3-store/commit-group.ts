// Concurrent writers sharing one durable commit (ABI-STORE-035): the finishing transactions of
// runs that end close together are applied in one LMDB write transaction, so they pay one flush
// of the file between them. A commit blocks this thread while the disk flushes (ABI-STORE-002),
// so a group waits, briefly, for the other runs still executing to end and join it.
import type { Store } from './handle.js';

/** Longest a queued transaction waits for writers still expected before it commits. */
export const GROUP_WAIT_MS = 2;

interface Queued {
  readonly action: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

interface Group {
  readonly queue: Queued[];
  immediate?: NodeJS.Immediate;
  timer?: NodeJS.Timeout;
}

const groups = new WeakMap<Store, Group>();

/**
 * Runs `action` in a write transaction shared with the other grouped actions queued meanwhile;
 * resolves once that transaction has committed (and flushed, ABI-STORE-003). The group commits as
 * soon as `expected()` (how many more writers the caller knows are coming, for example runs still
 * executing) is 0, else after GROUP_WAIT_MS. `action` must be synchronous and repeatable, as every
 * transaction body (ABI-STORE-005): when one action of a group throws, nothing of the group is
 * written and each action runs again in a transaction of its own, so one failure never takes
 * another writer's commit with it.
 */
export function groupedTransaction<T>(store: Store, action: () => T, expected: () => number = () => 0): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let group = groups.get(store);
    if (group === undefined) {
      group = { queue: [] };
      groups.set(store, group);
    }
    group.queue.push({ action, resolve: resolve as (value: unknown) => void, reject });
    if (expected() <= 0) group.immediate ??= setImmediate(() => commitGroup(store));
    else group.timer ??= setTimeout(() => commitGroup(store), GROUP_WAIT_MS);
  });
}

/**
 * Commits the actions queued for `store` now; a store being closed calls it first, so no queued
 * action meets a closed store.
 */
export function commitGroup(store: Store): void {
  const group = groups.get(store);
  if (group === undefined) return;
  groups.delete(store);
  if (group.immediate !== undefined) clearImmediate(group.immediate);
  if (group.timer !== undefined) clearTimeout(group.timer);
  const { queue } = group;
  if (queue.length > 1) {
    let results: unknown[] | undefined;
    try {
      results = store.transactionSync(() => queue.map((q) => q.action()));
    } catch {
      // Someone's action failed and LMDB aborted the whole group: each goes again alone below.
    }
    if (results !== undefined) {
      for (const [i, q] of queue.entries()) q.resolve(results[i]);
      return;
    }
  }
  for (const q of queue) {
    try {
      q.resolve(store.transactionSync(q.action));
    } catch (err) {
      q.reject(err);
    }
  }
}
