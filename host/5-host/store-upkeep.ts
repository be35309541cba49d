// The store's upkeep as the CLI runs it (`helix store check`, `helix gc [--compact]`): on a store
// home alone, with no toolpacks and no Host, because upkeep must not load or record anything first.
// The one way the commands reach host/3-store's maintenance functions; the handle stays here.
// `openDiagnostics` gives the store's diagnostic face over a home the same way, for reviewers'
// checks and repair tools.
import { checkStore, type CheckReport } from '../3-store/check.js';
import { compactStore, type CompactReport } from '../3-store/compact.js';
import { storeDiagnostics, type StoreDiagnostics } from '../3-store/diagnostics.js';
import { collectGarbage, type GcReport } from '../3-store/gc.js';
import { openStore, resolveHome } from '../3-store/open-store.js';

export type { CheckReport, CompactReport, GcReport, StoreDiagnostics };
export {
  keyText,
  newestCommitIn,
  ownerOf,
  STORE_MARKERS,
  type KeyRange,
  type Owner,
  type Planted,
  type StoreDatabaseName,
  type WrittenBlob,
} from '../3-store/diagnostics.js';

/** An open store home, for checking and collecting garbage; the caller closes it. */
export interface StoreUpkeep {
  /** Walks every database (ABI-STORE-060..065); never writes. */
  check(): CheckReport;
  /** Removes what nothing refers to, or with `dryRun` only reports it. */
  gc(options: { dryRun: boolean }): Promise<GcReport>;
  close(): Promise<void>;
}

/** Opens the store under `home` (default `HELIX_HOME`, else `./.helix`) for upkeep. */
export function openUpkeep(home: string | undefined): StoreUpkeep {
  const store = openStore(resolveHome(home));
  return { check: () => checkStore(store), gc: (options) => collectGarbage(store, options), close: () => store.close() };
}

/** Compacts the store under `home`, which no process (this one included) may have open. */
export function compactHome(home: string | undefined): Promise<CompactReport> {
  return compactStore(resolveHome(home), openStore);
}

/**
 * Opens the store under `home` (default `HELIX_HOME`, else `./.helix`) for its diagnostic face
 * alone (host/3-store/diagnostics.ts): no toolpacks, no Host, nothing written on opening. As
 * another process would open it. The caller closes it.
 */
export function openDiagnostics(home: string | undefined): StoreDiagnostics & { close(): Promise<void> } {
  const store = openStore(resolveHome(home));
  return { ...storeDiagnostics(store), close: () => store.close() };
}
