// The store file's header, checked before LMDB maps the file: LMDB trusts its two meta pages, and
// lmdb-js turns a refused open into a crash, so a damaged header would take down every command.
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { HelixError } from '../../abi/index.js';
import { pause } from './pause.js';

/** LMDB's stamp at the start of each meta (mdb.c MDB_MAGIC). */
export const LMDB_MAGIC = 0xbeefc0de;
/** The data file format lmdb-js 3 writes (mdb.c MDB_DATA_VERSION). */
export const LMDB_DATA_VERSION = 2;
/** The page sizes LMDB can write: powers of two up to MAX_PAGESIZE. */
const MIN_PAGE = 512;
const MAX_PAGE = 0x10000;
/** A page number no tree uses: the root of an empty tree (mdb.c P_INVALID). */
const P_INVALID = 0xffff_ffff_ffff_ffffn;
/** Cursor stack depth: LMDB cannot walk a deeper tree (mdb.c CURSOR_STACK). */
const MAX_DEPTH = 32;
/** Page header bytes before the meta (mdb.c PAGEHDRSZ on 64-bit builds). */
const PAGE_HEADER = 24;
const P_META = 0x08;
/** Reads a torn by a concurrent commit differ from the next read; damage reads the same each time. */
const READS = 3;

/** Offsets inside a meta (mdb.c MDB_meta: magic, version, address, mapsize, two MDB_db, last page, txnid). */
const META = { magic: 0, version: 4, psize: 24, dbs: [24, 72], lastPage: 120, txnid: 128, size: 144 } as const;
/** Offsets inside an MDB_db. */
const DB = { depth: 6, root: 40 } as const;
const TREES = ['free-page', 'main'] as const;

/** What the header says, for `helix store check` and tests. */
export interface StoreHeader {
  readonly pageSize: number;
  readonly fileBytes: number;
  /** The newest committed transaction and the last page it uses. */
  readonly txnid: bigint;
  readonly lastPage: bigint;
}

function damaged(file: string, what: string, details: Record<string, unknown> = {}): HelixError {
  return new HelixError('D-DATA-STORE-HEADER', {
    message: `The store file ${file} has a damaged header: ${what}.`,
    details: { path: file, problem: what, ...details },
  });
}

/** Problems of one meta (page `index`, at byte `offset`), or undefined when it is sound. */
function metaProblem(
  buf: Buffer,
  offset: number,
  index: number,
  pageSize: number,
  filePages: bigint,
  stamped: boolean,
): string | undefined {
  const at = offset + PAGE_HEADER;
  const where = `meta page ${index}`;
  if (stamped) {
    if (buf.readBigUInt64LE(offset) !== BigInt(index)) return `${where} carries page number ${buf.readBigUInt64LE(offset)}`;
    if ((buf.readUInt16LE(offset + 18) & P_META) === 0) return `${where} is not marked as a meta page`;
    if (buf.readUInt32LE(at + META.magic) !== LMDB_MAGIC) return `${where} lacks the LMDB magic number`;
    const version = buf.readUInt32LE(at + META.version) & 0xffff;
    if (version !== LMDB_DATA_VERSION) return `${where} has format version ${version}, not ${LMDB_DATA_VERSION}`;
  }
  const txnid = buf.readBigUInt64LE(at + META.txnid);
  if (!stamped && txnid === 0n) return undefined; // the flushed-meta slot is unused until the first sync
  const psize = buf.readUInt32LE(at + META.psize);
  if (psize !== pageSize) return `${where} has page size ${psize}, meta page 0 has ${pageSize}`;
  if (stamped && txnid !== 0n && Number(txnid & 1n) !== index)
    return `${where} holds transaction ${txnid}, which belongs in meta page ${Number(txnid & 1n)}`;
  const lastPage = buf.readBigUInt64LE(at + META.lastPage);
  if (lastPage < 1n || lastPage >= filePages) return `${where} says the last page is ${lastPage}, but the file has ${filePages} pages`;
  for (const [t, dbAt] of META.dbs.entries()) {
    const root = buf.readBigUInt64LE(at + dbAt + DB.root);
    const depth = buf.readUInt16LE(at + dbAt + DB.depth);
    if (root === P_INVALID) continue;
    if (root < 2n || root > lastPage) return `${where} puts the root of the ${TREES[t]} tree at page ${root}, outside pages 2-${lastPage}`;
    if (depth < 1 || depth > MAX_DEPTH) return `${where} gives the ${TREES[t]} tree depth ${depth}`;
  }
  return undefined;
}

/** One read of the header: the problem, or the header when it is sound. */
function readHeader(fd: number): StoreHeader | { problem: string; details: Record<string, unknown> } {
  const fileBytes = fstatSync(fd).size;
  const first = Buffer.alloc(PAGE_HEADER + META.size);
  const got = readSync(fd, first, 0, first.length, 0);
  if (got < first.length)
    return { problem: `the file is ${fileBytes} bytes, too short for an LMDB header`, details: { file_bytes: fileBytes } };
  const pageSize = first.readUInt32LE(PAGE_HEADER + META.psize);
  if (pageSize < MIN_PAGE || pageSize > MAX_PAGE || (pageSize & (pageSize - 1)) !== 0) {
    // Checked before anything else reads at page offsets: a zero page size divides by zero in LMDB.
    const stamped = first.readUInt32LE(PAGE_HEADER + META.magic) === LMDB_MAGIC;
    return {
      problem: stamped ? `meta page 0 has page size ${pageSize}` : 'meta page 0 lacks the LMDB magic number',
      details: { page_size: pageSize },
    };
  }
  if (fileBytes < 2 * pageSize)
    return {
      problem: `the file is ${fileBytes} bytes, shorter than its two ${pageSize}-byte meta pages`,
      details: { file_bytes: fileBytes },
    };
  const buf = Buffer.alloc(2 * pageSize);
  readSync(fd, buf, 0, buf.length, 0);
  const filePages = BigInt(Math.floor(fileBytes / pageSize));
  // lmdb-js keeps a third meta, the last one known flushed, in the second half of page 0.
  const slots = [
    { offset: 0, index: 0, stamped: true },
    { offset: pageSize, index: 1, stamped: true },
    { offset: pageSize / 2, index: 0, stamped: false },
  ];
  for (const slot of slots) {
    const problem = metaProblem(buf, slot.offset, slot.index, pageSize, filePages, slot.stamped);
    if (problem !== undefined)
      return {
        problem: slot.stamped ? problem : `the flushed copy of ${problem}`,
        details: { page_size: pageSize, file_bytes: fileBytes },
      };
  }
  const [a, b] = [0, pageSize].map((o) => ({
    txnid: buf.readBigUInt64LE(o + PAGE_HEADER + META.txnid),
    lastPage: buf.readBigUInt64LE(o + PAGE_HEADER + META.lastPage),
  }));
  const newest = a!.txnid >= b!.txnid ? a! : b!;
  return { pageSize, fileBytes, txnid: newest.txnid, lastPage: newest.lastPage };
}

/**
 * The newest transaction the two metas of the open file `fd` record (the file's page size is
 * `pageSize`): what a write transaction must start from (ABI-STORE-007).
 */
export function newestCommit(fd: number, pageSize: number): number {
  const txnid = Buffer.alloc(8);
  let newest = 0;
  for (const page of [0, 1]) {
    if (readSync(fd, txnid, 0, 8, page * pageSize + PAGE_HEADER + META.txnid) === 8)
      newest = Math.max(newest, Number(txnid.readBigUInt64LE(0)));
  }
  return newest;
}

/** newestCommit of the store file at `file`: how many commits it has had (for tests and checks). */
export function newestCommitIn(file: string): number {
  const fd = openSync(file, 'r');
  try {
    return newestCommit(fd, pageSizeOf(fd));
  } finally {
    closeSync(fd);
  }
}

/** The page size meta page 0 of the open file `fd` records. */
export function pageSizeOf(fd: number): number {
  const psize = Buffer.alloc(4);
  readSync(fd, psize, 0, 4, PAGE_HEADER + META.psize);
  return psize.readUInt32LE(0);
}

/**
 * Checks the LMDB header of the store file `file` (ABI-STORE-010..012): magic, format version,
 * page size, page numbers against the file size. Returns undefined when there is no file yet
 * (LMDB creates it). Throws P-PRECOND-STORE when the file cannot be read and written,
 * D-DATA-STORE-HEADER when the header is damaged. A problem must show on every one of a few
 * reads: another process committing meanwhile can tear one read, never three in a row.
 */
export function checkStoreHeader(file: string): StoreHeader | undefined {
  const info = statSync(file, { throwIfNoEntry: false });
  if (info === undefined) return undefined;
  if (!info.isFile())
    throw new HelixError('P-PRECOND-STORE', { message: `The store file ${file} is not a regular file.`, details: { path: file } });
  if (info.size === 0) return undefined;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDWR);
  } catch (err) {
    throw new HelixError('P-PRECOND-STORE', {
      message: `The store file ${file} cannot be opened for reading and writing: ${(err as Error).message}`,
      details: { path: file },
      cause: err,
    });
  }
  try {
    let last: { problem: string; details: Record<string, unknown> } | undefined;
    for (let i = 0; i < READS; i++) {
      if (i > 0) pause(10 * i);
      const read = readHeader(fd);
      if (!('problem' in read)) return read;
      last = read;
    }
    throw damaged(file, last!.problem, last!.details);
  } finally {
    closeSync(fd);
  }
}
