// The store category, in the report's order: the store damaged, tampered and concurrent. A store
// file with a damaged header, files that are not what they claim, records and chunks tampered with,
// processes killed mid-run, several processes on one store, a hostile process rewriting LMDB's lock
// region, pending writes and `helix gc` beside live writers, compaction, and `helix store check`
// finding each kind of damage. Every check drives the real thing: the built CLI as child processes,
// real LMDB files, the check's host; damage is planted through the store's diagnostic face.
import type { Check } from '../../check.js';
import { chunkBatchChecks } from './chunk-batches.js';
import { crashChecks } from './crashes.js';
import { damageChecks } from './damage.js';
import { fileHeaderChecks } from './file-header.js';
import { gcChecks } from './gc.js';
import { lockChecks } from './locks.js';
import { processChecks } from './processes.js';
import { storeCheckChecks } from './store-check.js';
import { verifyChecks } from './verify.js';

/** The store checks. */
export const storeChecks: readonly Check[] = [
  ...fileHeaderChecks,
  ...damageChecks,
  ...crashChecks,
  ...processChecks,
  ...lockChecks,
  ...gcChecks,
  ...storeCheckChecks,
  ...verifyChecks,
  ...chunkBatchChecks,
];
