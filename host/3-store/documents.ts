// The canonical documents a run id stands for (params and policies, RFC 8785 text under their
// sha256) and the idempotency keys bound to runs: written once with the run that first uses them,
// read back checked (a changed text no longer matches its hash: D-DATA-CHECKSUM).
import { storeHandle, type Store } from './handle.js';
import { readRecord } from './records.js';

/** The documents a run start records besides the run. */
export interface RunDocuments {
  readonly params_hash: string;
  readonly canonical_params: string;
  readonly policy_hash: string;
  readonly canonical_policy: string;
}

/** Keeps a run's params and policy text under their hashes unless already kept; call inside a transaction. */
export function keepRunDocuments(store: Store, docs: RunDocuments): void {
  const { params, policies } = storeHandle(store).db;
  if (!params.doesExist(docs.params_hash)) params.put(docs.params_hash, docs.canonical_params);
  if (!policies.doesExist(docs.policy_hash)) policies.put(docs.policy_hash, docs.canonical_policy);
}

/** The canonical params text kept under `hash`, checked against it; undefined when absent. */
export function readParams(store: Store, hash: string): string | undefined {
  return readRecord(store, 'params', hash);
}

/** The canonical policy text kept under `hash`, checked against it; undefined when absent. */
export function readPolicy(store: Store, hash: string): string | undefined {
  return readRecord(store, 'policies', hash);
}

/** Binds an idempotency key to a run; call inside the transaction that records the run. */
export function bindIdempotencyKey(store: Store, key: string, runId: string): void {
  storeHandle(store).db.idempotency.put(key, runId);
}

/** The run an idempotency key is bound to, checked; undefined when it is unbound. */
export function idempotencyRun(store: Store, key: string): string | undefined {
  return readRecord(store, 'idempotency', key);
}
