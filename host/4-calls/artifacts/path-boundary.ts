// The file-system boundary shared by import and export: the policy's roots (realpath'd), the
// inside-a-root test, and errors that name the path, the reason and the fix.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { HelixError } from '../../../abi/index.js';
import { isInside } from '../../1-base/files/fs-facts.js';

/** A policy root as written (resolved) and as it really is (null when it does not exist). */
export interface Root {
  readonly given: string;
  readonly real: string | null;
}

/** Which boundary a check is for; it names the roots and the verb in messages. */
export type Boundary = 'import' | 'export';

/** Resolves the policy's roots; a root that does not exist contains nothing. */
export async function resolveRoots(roots: readonly string[]): Promise<Root[]> {
  return Promise.all(
    roots.map(async (r) => {
      const given = path.resolve(r);
      return { given, real: await realpath(given).catch(() => null) };
    }),
  );
}

/** Whether `p` is inside one of the roots, as written (`given`) or real (`real`) or either. */
export function insideRoots(p: string, roots: readonly Root[], which: 'given-or-real' | 'real'): boolean {
  return roots.some((r) => (r.real !== null && isInside(p, r.real)) || (which === 'given-or-real' && isInside(p, r.given)));
}

const verb = (boundary: Boundary): string => (boundary === 'import' ? 'import' : 'export to');

/**
 * The refusal for a path not inside any root: P-PRECOND-PATH when it is a root itself (a
 * directory, which is the real mistake), else A-AUTH-PATH-OUTSIDE-ROOTS listing the roots.
 */
export function outsideRoots(boundary: Boundary, p: string, roots: readonly Root[], realPath?: string): HelixError {
  if (roots.some((r) => r.given === p || r.real === p)) {
    return pathError(
      boundary,
      p,
      `it is the ${boundary} root itself, a directory`,
      boundary === 'import' ? 'Import a file inside the root.' : 'Export to a file path inside the root.',
    );
  }
  const list = roots.map((r) => r.real ?? r.given);
  const where = realPath !== undefined && realPath !== p ? ` (its real path is ${realPath})` : '';
  return new HelixError('A-AUTH-PATH-OUTSIDE-ROOTS', {
    message:
      list.length === 0
        ? `Cannot ${verb(boundary)} ${p}: the policy has no ${boundary} roots (paths.${boundary}Roots is empty).`
        : `Cannot ${verb(boundary)} ${p}${where}: it is outside the ${boundary} roots (${list.join(', ')}).`,
    details: { path: p, ...(realPath === undefined ? {} : { real_path: realPath }), roots: list, boundary },
    hint:
      list.length === 0
        ? `Add a directory to the policy's paths.${boundary}Roots.`
        : `Use a path under one of the roots in details.roots, or add a root to the policy's paths.${boundary}Roots.`,
  });
}

/** A-AUTH-SYMLINK for `p`: a link itself, or a path that goes through one. */
export function symlinkRefused(boundary: Boundary, p: string, realPath?: string): HelixError {
  return new HelixError('A-AUTH-SYMLINK', {
    message:
      realPath === undefined
        ? `Cannot ${verb(boundary)} ${p}: it is a symbolic link.`
        : `Cannot ${verb(boundary)} ${p}: the path goes through a symbolic link (its real path is ${realPath}).`,
    details: { path: p, ...(realPath === undefined ? {} : { real_path: realPath }), boundary },
    hint:
      boundary === 'import'
        ? 'Pass the real path of the file (realpath), not a link to it.'
        : 'Choose a destination that is not a symbolic link.',
  });
}

/** P-PRECOND-PATH for `p` with the reason. */
export function pathError(boundary: Boundary, p: string, reason: string, hint?: string, cause?: unknown): HelixError {
  return new HelixError('P-PRECOND-PATH', {
    message: `Cannot ${verb(boundary)} ${p}: ${reason}.`,
    details: { path: p, reason, boundary },
    ...(hint === undefined ? {} : { hint }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** A person's words for a file-system error code. */
export function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'it does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a component of the path is not a directory';
    case 'ELOOP':
      return 'the path has a symbolic link loop';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return e.code === undefined ? String((err as Error).message ?? err) : `${e.code}: ${e.message}`;
  }
}
