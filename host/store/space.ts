// How the store's file is used, from LMDB's own statistics: an LMDB file never shrinks when
// records are deleted; their pages go to LMDB's free list and later writes reuse them. These
// figures are what `helix gc` reports before and after (ABI-STORE-055).
import { statSync } from 'node:fs';
import type { Store } from './open-store.js';

/** The file and its pages. */
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
  readonly pageSize?: number;
  readonly treeBranchPageCount: number;
  readonly treeLeafPageCount: number;
  readonly overflowPages: number;
}

const pagesOf = (s: PageStats): number => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;

/**
 * Measures the store: every page LMDB has allocated (last page number + 1) minus the pages of
 * every database (named ones, the main one, the free list itself) and the two meta pages.
 */
export function measureSpace(store: Store): StoreSpace {
  const env = store.root.getStats() as { lastPageNumber: number; root: PageStats & { pageSize: number }; free: PageStats };
  let used = 2 + pagesOf(env.root) + pagesOf(env.free);
  // The main database's keys name every named database, including any this version does not know.
  for (const name of store.root.getKeys()) used += pagesOf(store.root.openDB({ name: String(name) }).getStats() as PageStats);
  const pages = env.lastPageNumber + 1;
  const pageSize = env.root.pageSize;
  const free = Math.max(0, pages - used);
  return { file_bytes: statSync(store.path).size, page_size: pageSize, pages, free_pages: free, free_bytes: free * pageSize };
}
