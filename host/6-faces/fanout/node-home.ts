// Where `helix job run` keeps its store on the node (ABI-FANOUT-003): a new directory under
// $TMPDIR unless --home names one, never the submitting store, and never on a network filesystem,
// since LMDB's locks and memory map are only sound on a local one.
import { mkdirSync, mkdtempSync, realpathSync, statfsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { HelixError } from '../../../abi/index.js';

/** statfs f_type magic numbers of network and cluster filesystems (linux/magic.h and the filesystems' own), written in hex as they publish them. */
const NETWORK_FS_TYPES: ReadonlyMap<number, string> = new Map([
  [0x6969, 'nfs'],
  [0x517b, 'smb'],
  [0xff534d42, 'cifs'],
  [0xfe534d42, 'smb2'],
  [0x0bd00bd0, 'lustre'],
  [0x47504653, 'gpfs'],
  [0x00c36400, 'ceph'],
  [0x19830326, 'beegfs'],
  [0x01021997, '9p'],
  [0x65735546, 'fuse'],
  [0x6b414653, 'afs'],
  [0x5346414f, 'afs'],
  [0x013111a8, 'ibrix'],
  [0x564c, 'ncp'],
  [0x73757245, 'coda'],
  [0xaad7aaea, 'panfs'],
]);

/** The network filesystem `dir` lies on, by its statfs type, or undefined for a local one. */
export function networkFilesystem(dir: string, statfs: (p: string) => { type: number } = statfsSync): string | undefined {
  return NETWORK_FS_TYPES.get(statfs(dir).type >>> 0);
}

/**
 * The Helix home the job's store is opened in: `home` when given (created if missing), else a new
 * directory under the temporary directory. Refused with P-PRECOND-JOB-HOME when it is the
 * submitting store's home on this host, or lies on a network filesystem.
 */
export function nodeHome(
  home: string | undefined,
  submittedFrom: { home: string; hostname: string },
  statfs?: (p: string) => { type: number },
): { home: string; temporary: boolean } {
  let dir: string;
  try {
    if (home === undefined) dir = mkdtempSync(path.join(tmpdir(), 'helix-job-'));
    else {
      dir = path.resolve(home);
      mkdirSync(dir, { recursive: true });
    }
    dir = realpathSync(dir);
  } catch (err) {
    throw new HelixError('P-PRECOND-JOB-HOME', {
      message: `The node-local store's home cannot be made: ${(err as Error).message}.`,
      details: { home: home ?? tmpdir() },
    });
  }
  if (submittedFrom.hostname === hostname() && sameDir(dir, submittedFrom.home)) {
    throw new HelixError('P-PRECOND-JOB-HOME', {
      message: `The node-local store would be the submitting store ${submittedFrom.home}; a job never opens the store it was submitted from.`,
      details: { home: dir, submitted_from: submittedFrom.home },
    });
  }
  const fs = networkFilesystem(dir, statfs);
  if (fs !== undefined) {
    throw new HelixError('P-PRECOND-JOB-HOME', {
      message: `The node-local store's home ${dir} is on a network filesystem (${fs}); LMDB is never kept on one.`,
      details: { home: dir, filesystem: fs },
    });
  }
  return { home: dir, temporary: home === undefined };
}

function sameDir(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return path.resolve(a) === path.resolve(b);
  }
}
