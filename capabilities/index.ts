// The capability registry: every capability a guest can reach through the broker. A manifest
// that allows a name not served here fails to load (fail-closed), so the list is exact.
import { artifactList, artifactRead, artifactStat, artifactWrite } from './artifact.js';
import { clockNowUnix } from './clock.js';
import { dockerRun } from './docker-run.js';
import { httpRequest } from './http.js';
import { kvDelete, kvGet, kvList, kvPut } from './kv.js';
import { logEmit } from './log.js';
import { secretsGet } from './secrets.js';
import { slurmCancel, slurmCollect, slurmStatus } from './slurm-jobs.js';
import { slurmSubmit } from './slurm-submit.js';
import type { CapabilityDefinition } from './types.js';

export type * from './types.js';

/** Every capability this host serves, by name. */
export const CAPABILITIES: ReadonlyMap<string, CapabilityDefinition> = new Map(
  (
    [
      clockNowUnix,
      logEmit,
      kvGet,
      kvPut,
      kvDelete,
      kvList,
      artifactStat,
      artifactRead,
      artifactWrite,
      artifactList,
      secretsGet,
      httpRequest,
      dockerRun,
      slurmSubmit,
      slurmStatus,
      slurmCancel,
      slurmCollect,
    ] satisfies CapabilityDefinition[]
  ).map((c) => [c.name, c]),
);

/** What an allowlist entry names: a capability, and for scoped ones the scope. */
export interface AllowEntry {
  readonly capability: CapabilityDefinition;
  readonly scope: string | undefined;
}

/**
 * Resolves an allowlist entry: an exact capability name, or `<scoped capability>.<scope>`
 * (`secrets.get.db_password`). A scoped capability's bare name is not an entry: it would grant
 * every secret.
 */
export function findCapability(entry: string): AllowEntry | undefined {
  const exact = CAPABILITIES.get(entry);
  if (exact !== undefined) return exact.scopeOf === undefined ? { capability: exact, scope: undefined } : undefined;
  for (const c of CAPABILITIES.values()) {
    if (c.scopeOf !== undefined && entry.startsWith(`${c.name}.`)) return { capability: c, scope: entry.slice(c.name.length + 1) };
  }
  return undefined;
}

export { BulkReadArgs, BulkReadResult, BulkWriteArgs, bulkRead, bulkWrite, parseBulkArgs, type BulkPiece } from './artifact-bulk.js';
