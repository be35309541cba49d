// The workspace of one docker.run call (ABI-DOCKER-008, -009): a directory of its own under the
// host's work root holding in/ (the input artifacts, materialised under their checked names and
// mounted read-only), out/ (the container's only writable mount, owned by its user) and meta/
// (what the call is, read-only). Declared outputs are read back from out/ once the container is
// gone, without following a link, and only regular files within the size cap; the directory is
// removed afterwards whatever happened.
import { constants, type Stats } from 'node:fs';
import { chmod, chown, type FileHandle, lstat, mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { HelixError } from '../abi/index.js';
import type { DockerPlan } from './docker-request.js';
import type { ArtifactPort } from './types.js';

/** Where the workspace is mounted inside the container: /work/in, /work/out, /work/meta. */
export const WORKSPACE_MOUNT = '/work';
/** The container's user (ABI-DOCKER-005), who owns out/. */
const CONTAINER_UID = 65534;
// Input and output bytes move in pieces of this size: memory stays flat whatever the file's size.
const PIECE_BYTES = 1024 * 1024;

/** The host's work root: HELIX_DOCKER_WORK, else `helix-docker-work` in the temporary directory. */
export function defaultWorkRoot(): string {
  return process.env.HELIX_DOCKER_WORK ?? path.join(tmpdir(), 'helix-docker-work');
}

/** An output read back from out/ and registered as the run's artifact. */
export interface CollectedOutput {
  readonly file: string;
  readonly role: string;
  readonly artifact_id: string;
  readonly sha256: string;
  readonly size: number;
}

/**
 * Checks what a plan's workspace needs before anything is created: every output and log role
 * declared by the tool, every input artifact present, their bytes within the ceiling.
 */
export function checkWorkspaceRefs(plan: DockerPlan, artifacts: ArtifactPort): void {
  const roles = [
    ...plan.outputs.map((o, i) => [o.role, `/outputs/${i}/role`] as const),
    ...(['stdout', 'stderr'] as const).flatMap((s) => (plan.logs[s] === undefined ? [] : [[plan.logs[s]!, `/logs/${s}`] as const])),
  ];
  for (const [role, pointer] of roles) {
    if (artifacts.declared(role) === undefined) {
      throw new HelixError('C-CONTRACT-OUTPUT-ROLE', {
        message: `docker.run: role "${role}" at ${pointer} is not a declared output of the tool.`,
        details: { role, pointer },
      });
    }
  }
  let bytes = 0;
  for (const input of plan.inputs) bytes += artifacts.stat(input.artifact_id).size;
  const ceiling = plan.limits.maxWorkspaceInputBytes;
  if (bytes > ceiling) {
    throw new HelixError('A-AUTH-DOCKER-LIMIT', {
      message: `docker.run refused inputs of ${bytes} bytes: the policy's docker.ceilings.maxWorkspaceInputBytes is ${ceiling}.`,
      details: { pointer: '/inputs', asked: bytes, ceiling, field: 'docker.ceilings.maxWorkspaceInputBytes' },
    });
  }
}

/** A call's workspace on the host. */
export class Workspace {
  private constructor(readonly dir: string) {}

  /** Creates in/, out/ (writable by the container's user only) and meta/ in a new directory under `root`. */
  static async create(root: string): Promise<Workspace> {
    await mkdir(root, { recursive: true, mode: 0o700 });
    // The process id in the name lets a later start tell a crash's leftover from a live call's.
    const ws = new Workspace(await mkdtemp(path.join(root, `${process.pid}-`)));
    for (const sub of ['in', 'out', 'meta']) await mkdir(path.join(ws.dir, sub), { mode: 0o755 });
    const out = path.join(ws.dir, 'out');
    if (process.getuid?.() === 0) {
      await chown(out, CONTAINER_UID, CONTAINER_UID);
      await chmod(out, 0o700);
    } else {
      // Without root the directory cannot be given to uid 65534: anyone may write it (README, "docker.run").
      await chmod(out, 0o777);
    }
    return ws;
  }

  /** Writes each input artifact's stored bytes to in/<name> (a new file, never through a link) and the call's description to meta/call.json. */
  async materialise(plan: DockerPlan, artifacts: ArtifactPort, call: { runId: string; toolId: string }): Promise<void> {
    const described = [];
    for (const input of plan.inputs) {
      const summary = artifacts.stat(input.artifact_id);
      const file = await open(
        path.join(this.dir, 'in', input.name),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o444,
      );
      try {
        for (let offset = 0, eof = summary.size === 0; !eof; offset += PIECE_BYTES) {
          const piece = await artifacts.read(input.artifact_id, {
            offset,
            length: Math.min(PIECE_BYTES, summary.size - offset),
            decompress: false,
          });
          await file.write(piece.data);
          eof = piece.eof || offset + PIECE_BYTES >= summary.size;
        }
      } finally {
        await file.close();
      }
      described.push({
        name: input.name,
        path: `${WORKSPACE_MOUNT}/in/${input.name}`,
        artifact_id: summary.id,
        sha256: summary.sha256,
        size: summary.size,
        type: summary.type,
        compression: summary.compression,
      });
    }
    const meta = {
      run_id: call.runId,
      tool: call.toolId,
      inputs: described,
      outputs: plan.outputs.map((o) => ({ file: o.file, path: `${WORKSPACE_MOUNT}/out/${o.file}`, role: o.role })),
    };
    await writeFile(path.join(this.dir, 'meta', 'call.json'), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o444, flag: 'wx' });
    await chmod(path.join(this.dir, 'in'), 0o555);
    await chmod(path.join(this.dir, 'meta'), 0o555);
  }

  /** The bind mounts: in/ and meta/ read-only, out/ the only writable one. */
  mounts(): Docker.MountSettings[] {
    const bind = (sub: string, readOnly: boolean): Docker.MountSettings => ({
      Type: 'bind',
      Source: path.join(this.dir, sub),
      Target: `${WORKSPACE_MOUNT}/${sub}`,
      ReadOnly: readOnly,
    });
    return [bind('in', true), bind('out', false), bind('meta', true)];
  }

  /**
   * Registers each declared output found in out/ under its role; the files not found. Call it only
   * once the container is removed: nothing can change out/ any more. A link, a directory, a FIFO,
   * a device or a file over the cap is refused with S-TOOL-DOCKER-OUTPUT.
   */
  async collect(plan: DockerPlan, artifacts: ArtifactPort): Promise<{ outputs: CollectedOutput[]; missing: string[] }> {
    const outDir = path.join(this.dir, 'out');
    // A mount point cannot be replaced from inside the container; checked all the same.
    const dirStat = await lstat(outDir);
    if (!dirStat.isDirectory()) throw refused('out', 'out/ is no longer a directory');
    const outputs: CollectedOutput[] = [];
    const missing: string[] = [];
    const cap = plan.limits.maxOutputFileBytes;
    for (const o of plan.outputs) {
      let file: FileHandle;
      try {
        // O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: a FIFO cannot hold the host.
        file = await open(path.join(outDir, o.file), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          missing.push(o.file);
          continue;
        }
        if (code === 'ELOOP') throw refused(o.file, 'it is a symbolic link');
        throw refused(o.file, `it cannot be opened (${code ?? 'error'})`);
      }
      try {
        const st = await file.stat();
        if (!st.isFile()) throw refused(o.file, `it is ${kindOf(st)}, not a regular file`);
        if (st.size > cap)
          throw refused(o.file, `it is ${st.size} bytes, over docker.ceilings.maxOutputFileBytes (${cap})`, {
            size: st.size,
            ceiling: cap,
          });
        const meta = { ...(o.type === undefined ? {} : { type: o.type }), ...(o.label === undefined ? {} : { label: o.label }) };
        const buffer = Buffer.alloc(Math.min(PIECE_BYTES, Math.max(1, st.size)));
        let sealed: { id: string; sha256: string; size: number } | undefined;
        for (let read = 0; sealed === undefined; ) {
          const { bytesRead } = await file.read(buffer, 0, buffer.length, read);
          read += bytesRead;
          if (read > cap) throw refused(o.file, `it grew past docker.ceilings.maxOutputFileBytes (${cap})`, { ceiling: cap });
          // Copied: the writer keeps the piece until it is stored, and the buffer is reused.
          sealed = (await artifacts.write(o.role, Buffer.from(buffer.subarray(0, bytesRead)), bytesRead === 0, meta)).artifact;
        }
        outputs.push({ file: o.file, role: o.role, artifact_id: sealed.id, sha256: sealed.sha256, size: sealed.size });
      } finally {
        await file.close();
      }
    }
    return { outputs, missing };
  }

  /**
   * Removes the workspace; links in it are removed, never followed. Never throws: the call's
   * outcome stands, and what a host without root cannot remove (a directory the container made
   * in out/) is left to the next start's sweep.
   */
  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true, maxRetries: 2 }).catch(() => undefined);
  }
}

/**
 * Removes the workspaces under `root` made by a process that is gone (a crash's leftovers); their
 * names. A workspace whose process lives belongs to a call in progress and is kept.
 */
export async function sweepWorkspaces(root: string, alive: (pid: number) => boolean): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const orphans = names.filter((name) => {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    return Number.isSafeInteger(pid) && pid > 0 && !alive(pid);
  });
  for (const name of orphans) await rm(path.join(root, name), { recursive: true, force: true, maxRetries: 2 });
  return orphans;
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function refused(file: string, reason: string, extra: Record<string, unknown> = {}): HelixError {
  return new HelixError('S-TOOL-DOCKER-OUTPUT', {
    message: `docker.run refused the output ${file}: ${reason}.`,
    details: { file, reason, ...extra },
  });
}
