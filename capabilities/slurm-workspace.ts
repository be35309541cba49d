// A Slurm job's directory under the policy's work root: in/ with the input artifacts under their
// checked names, out/ for what the job writes, meta/ for its script and logs (ABI-SLURM-007); and
// reading a file back out of it for collect without following a link or leaving the directory
// (ABI-SLURM-010).
import { constants, type Stats } from 'node:fs';
import { access, lstat, mkdir, open, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HelixError } from '../abi/index.js';
import type { SubmitPlan } from './slurm-request.js';
import type { ArtifactSummary, CapabilityContext } from './types.js';

/** Bytes of an artifact read per piece while it is written into in/. */
const PIECE_BYTES = 1024 * 1024;
// O_NOFOLLOW refuses a link put in place of the file; O_NONBLOCK keeps a FIFO from blocking the open.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

function workRootError(root: string, why: string): HelixError {
  return new HelixError('P-PRECOND-SLURM-WORK-ROOT', {
    message: `slurm.submit cannot place the job: the policy's slurm.workRoot ${root} ${why}.`,
    details: { work_root: root },
  });
}

/** Checks that the work root is a real, writable directory (no link on the way), or P-PRECOND-SLURM-WORK-ROOT. */
export async function checkWorkRoot(root: string): Promise<void> {
  let real: string;
  try {
    real = await realpath(root);
    await access(root, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw workRootError(root, `cannot be used (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (real !== root) throw workRootError(root, `goes through a symbolic link (to ${real})`);
  if (!(await lstat(root)).isDirectory()) throw workRootError(root, 'is not a directory');
}

/**
 * Makes the job's directory afresh (a directory left by a crash before sbatch is replaced): in/
 * holding each input artifact, out/ empty, meta/ holding the script. Nothing is submitted yet.
 */
export async function prepareJobDir(plan: SubmitPlan, ctx: Pick<CapabilityContext, 'artifacts' | 'signal'>): Promise<void> {
  const root = path.dirname(plan.dir);
  await checkWorkRoot(root);
  await rm(plan.dir, { recursive: true, force: true });
  await mkdir(plan.dir, { mode: 0o750 });
  for (const sub of ['in', 'out', 'meta']) await mkdir(path.join(plan.dir, sub), { mode: 0o750 });
  for (const input of plan.inputs) {
    const file = await open(path.join(plan.dir, 'in', input.name), 'wx', 0o640);
    try {
      for (let offset = 0; ; ) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const { data, eof } = await ctx.artifacts.read(input.artifactId, { offset, length: PIECE_BYTES, decompress: input.decompress });
        await file.write(data);
        offset += data.length;
        if (eof || data.length === 0) break;
      }
    } finally {
      await file.close();
    }
  }
  await writeFile(path.join(plan.dir, 'meta', 'job.sh'), plan.script, { mode: 0o640 });
}

function pathRefused(file: string, why: string): HelixError {
  return new HelixError('A-AUTH-SLURM-OUTPUT-PATH', {
    message: `slurm.collect refused ${file}: ${why}.`,
    details: { path: file, problem: why },
  });
}

/** What collect made of one file: its artifact, or null when the job did not write it. */
export interface CollectedFile {
  readonly artifact: ArtifactSummary | null;
  /** Bytes the file held past the cap and left out (logs only; a declared output over it is refused). */
  readonly truncated: boolean;
}

/**
 * Stores `<dir>/<sub>/<name>` as an artifact: refused if the job made `sub` or the file a link or
 * anything but a regular file; over `maxBytes` refused, or with `truncate` cut there.
 */
export async function collectFile(
  dir: string,
  sub: 'out' | 'meta',
  name: string,
  options: { readonly maxBytes: number; readonly truncate: boolean; readonly label: string; readonly type?: string },
  ctx: Pick<CapabilityContext, 'imports'>,
): Promise<CollectedFile> {
  const folder = path.join(dir, sub);
  const file = path.join(folder, name);
  const folderStats = await lstat(folder).catch(() => undefined);
  if (folderStats === undefined || folderStats.isSymbolicLink() || !folderStats.isDirectory() || (await realpath(folder)) !== folder) {
    throw pathRefused(folder, `${sub}/ is no longer the job's own directory`);
  }
  let stats: Stats;
  try {
    stats = await lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { artifact: null, truncated: false };
    throw err;
  }
  if (stats.isSymbolicLink()) throw pathRefused(file, 'it is a symbolic link');
  if (!stats.isFile()) throw pathRefused(file, 'it is not a regular file');
  if (stats.size > options.maxBytes && !options.truncate) {
    throw new HelixError('R-CAP-SLURM-OUTPUT-TOO-LARGE', {
      message: `slurm.collect refused ${file}: it is ${stats.size} bytes, above the policy's slurm.ceilings.outputBytes of ${options.maxBytes}.`,
      details: { path: file, size: stats.size, max_bytes: options.maxBytes },
    });
  }
  const handle = await open(file, READ_FLAGS).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ELOOP' ? pathRefused(file, 'it is a symbolic link') : err;
  });
  try {
    const opened = await handle.stat();
    if (opened.ino !== stats.ino || opened.dev !== stats.dev || !opened.isFile())
      throw pathRefused(file, 'it was replaced while it was being checked');
    const keep = Math.min(opened.size, options.maxBytes);
    const stream = handle.createReadStream({ start: 0, end: keep === 0 ? 0 : keep - 1, autoClose: false });
    try {
      const source = keep === 0 ? (async function* () {})() : stream;
      const artifact = await ctx.imports.importStream(source, {
        path: file,
        mtimeMs: opened.mtimeMs,
        maxBytes: options.maxBytes,
        label: options.label,
        ...(options.type === undefined ? {} : { type: options.type }),
      });
      return { artifact, truncated: opened.size > keep };
    } finally {
      stream.destroy();
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}
