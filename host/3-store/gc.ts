// `helix gc` (ABI-STORE-051..055): removes what nothing can reach (chunks no live blob or live
// pending write lists, blobs no artifact, run or module names, pending writes of dead
// processes), deciding and removing in one write transaction, so writers in other processes,
// which register their chunks before relying on them, never lose one.
import { statSync } from 'node:fs';
import { HelixError, SHA256_PATTERN } from '../../abi/index.js';
import { storeHandle, type Store } from './handle.js';
import { endPending, isLiveWriter, PendingRecordSchema, pendingWrites } from './pending.js';
import { walk } from './walk.js';

/** The store's file and its pages, from LMDB's own statistics. */
export interface StoreSpace {
  /** Size of the LMDB file on disk, bytes. */
  readonly file_bytes: number;
  readonly page_size: number;
  /** Pages in use up to the highest page LMDB has written. */
  readonly pages: number;
  /** Pages no database holds: free for later writes once no reader keeps an older snapshot. */
  readonly free_pages: number;
  /** free_pages * page_size. */
  readonly free_bytes: number;
}

interface PageStats {
  readonly treeBranchPageCount: number;
  readonly treeLeafPageCount: number;
  readonly overflowPages: number;
}

const pagesOf = (s: PageStats): number => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;

/**
 * Measures the store's file (ABI-STORE-055): every page LMDB has allocated (last page number
 * + 1) minus the pages of every database (named ones, the main one, the free list itself) and
 * the two meta pages. Deleted records do not shrink the file; their pages are what is free.
 */
export function measureSpace(store: Store): StoreSpace {
  const env = storeHandle(store).root.getStats() as { lastPageNumber: number; root: PageStats & { pageSize: number }; free: PageStats };
  let used = 2 + pagesOf(env.root) + pagesOf(env.free);
  // The main database's keys name every named database, including any this version does not know.
  for (const name of storeHandle(store).root.getKeys())
    used += pagesOf(
      storeHandle(store)
        .root.openDB({ name: String(name) })
        .getStats() as PageStats,
    );
  const pages = env.lastPageNumber + 1;
  const pageSize = env.root.pageSize;
  const free = Math.max(0, pages - used);
  return { file_bytes: statSync(store.path).size, page_size: pageSize, pages, free_pages: free, free_bytes: free * pageSize };
}

/** Options of collectGarbage. */
export interface GcOptions {
  /** Decide as gc would, in the same transaction, but remove nothing. */
  readonly dryRun?: boolean;
}

/** What a gc removed (or, dry, would remove) and how the file's space looks before and after. */
export interface GcReport {
  readonly dry_run: boolean;
  readonly removed: { readonly chunks: number; readonly chunk_bytes: number; readonly blobs: number; readonly pending_writes: number };
  readonly kept: { readonly chunks: number; readonly blobs: number; readonly live_pending_writes: number };
  readonly space_before: StoreSpace;
  readonly space_after: StoreSpace;
}

/** What the mark phase found; removals are listed, not yet made. */
interface Plan {
  readonly chunks: string[];
  chunkBytes: number;
  readonly blobs: string[];
  readonly pending: string[];
  keptChunks: number;
  keptBlobs: number;
  livePending: number;
}

function unreadable(database: string, key: unknown, what: string): HelixError {
  return new HelixError('D-DATA-RECORD-INVALID', {
    message: `gc stopped before removing anything: the record ${JSON.stringify(key)} in ${database} is damaged (${what}), so what it refers to cannot be known.`,
    details: { database, key },
    hint: 'Run `helix store check` to list the damage; restore the store from a backup, then run gc again.',
  });
}

const isDigest = (v: unknown): v is string => typeof v === 'string' && SHA256_PATTERN.test(v);

/** Blobs something names (ABI-STORE-051): artifacts, runs (input, module) and module records. */
function liveBlobs(store: Store): Set<string> {
  const { db } = storeHandle(store);
  const live = new Set<string>();
  for (const { key, value, error } of walk(db.artifacts)) {
    const sha = (value as { sha256?: unknown } | null | undefined)?.sha256;
    if (!isDigest(sha)) throw unreadable('artifacts', key, error ?? 'no readable sha256');
    live.add(sha);
  }
  for (const { key, value, error } of walk(db.runs)) {
    const run = value as { input_sha256?: unknown; module_digest?: unknown } | null | undefined;
    if (run === null || typeof run !== 'object') throw unreadable('runs', key, error ?? 'not a record');
    if (run.input_sha256 != null && !isDigest(run.input_sha256)) throw unreadable('runs', key, 'no readable input_sha256');
    if (isDigest(run.input_sha256)) live.add(run.input_sha256);
    if (typeof run.module_digest === 'string') live.add(run.module_digest.replace(/^sha256:/, ''));
  }
  for (const { key, value } of walk(db.modules)) {
    // The key is the module's digest, so its blob is known even when the record is damaged.
    live.add(String(key).replace(/^sha256:/, ''));
    const blob = (value as { blob?: unknown } | null | undefined)?.blob;
    if (isDigest(blob)) live.add(blob);
  }
  return live;
}

/** The mark phase; runs inside the write transaction, so its view cannot change under it. */
function plan(store: Store): Plan {
  const { db } = storeHandle(store);
  const blobsLive = liveBlobs(store);
  const chunksLive = new Set<string>();
  const p: Plan = { chunks: [], chunkBytes: 0, blobs: [], pending: [], keptChunks: 0, keptBlobs: 0, livePending: 0 };
  for (const { key, value, error } of walk(db.blobs)) {
    // A key that is no digest means the database's tree is damaged (pages shared with another
    // tree): nothing in it can be told garbage.
    if (!isDigest(key)) throw unreadable('blobs', key, 'the key is not a sha256 digest');
    if (!blobsLive.has(key)) {
      p.blobs.push(key);
      continue;
    }
    const chunks = (value as { chunks?: unknown } | null | undefined)?.chunks;
    if (!Array.isArray(chunks)) throw unreadable('blobs', key, error ?? 'no readable chunk list');
    for (const c of chunks) chunksLive.add(String(c));
    p.keptBlobs++;
  }
  for (const write of pendingWrites(store)) {
    const header = PendingRecordSchema.safeParse(write.header);
    // A damaged header might belong to a live writer: its chunks stay (store check reports it).
    const live = write.header === undefined ? false : !header.success || isLiveWriter(header.data.owner);
    if (live) {
      for (const c of write.chunks) chunksLive.add(c);
      p.livePending++;
    } else p.pending.push(write.id);
  }
  for (const key of db.chunks.getKeys()) {
    if (!isDigest(key)) throw unreadable('chunks', key, 'the key is not a sha256 digest');
    if (chunksLive.has(key)) {
      p.keptChunks++;
      continue;
    }
    p.chunks.push(key);
    p.chunkBytes += db.chunks.getBinaryFast(key)?.length ?? 0;
  }
  return p;
}

/**
 * Collects garbage (ABI-STORE-052/053): marks and sweeps in one LMDB write transaction, which
 * excludes every other writer in every process. Never removes a run, an artifact, an event, a
 * journal or audit entry, a kv entry, a module, params or a policy. Throws
 * D-DATA-RECORD-INVALID, removing nothing, when a record that may name a blob cannot be read.
 */
export async function collectGarbage(store: Store, options: GcOptions = {}): Promise<GcReport> {
  const { db } = storeHandle(store);
  const dryRun = options.dryRun === true;
  const before = measureSpace(store);
  const p = await store.transaction(() => {
    const found = plan(store);
    if (dryRun) return found;
    for (const id of found.pending) endPending(store, id);
    for (const key of found.blobs) db.blobs.removeSync(key);
    for (const key of found.chunks) db.chunks.removeSync(key);
    return found;
  });
  return {
    dry_run: dryRun,
    removed: { chunks: p.chunks.length, chunk_bytes: p.chunkBytes, blobs: p.blobs.length, pending_writes: p.pending.length },
    kept: { chunks: p.keptChunks, blobs: p.keptBlobs, live_pending_writes: p.livePending },
    space_before: before,
    space_after: measureSpace(store),
  };
}
