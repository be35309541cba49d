// A stand-in for a fresh machine in the tests: a PATH with Node, npm and the ordinary system
// tools but no C toolchain or seqkit, an environment without npm's or Helix's variables, a
// copy of the working tree outside the repository, and commands run there with a bound.

import { execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../host/1-base/paths.js';

/** Commands a fresh machine lacks: the C toolchain (clang, wasm-ld, lld) and seqkit. */
export const FRESH_MACHINE_LACKS = /^(clang|wasm-ld|lld|ld\.lld|ld64\.lld|seqkit)/;

/**
 * Fills `bin` with a symlink to every command on this PATH except those matching `lacks`, and
 * returns it. Node's own folder comes first; folders inside the repository (npm puts the
 * repository's node_modules/.bin on PATH while it runs the tests) are left out.
 */
export async function freshBin(bin: string, lacks: RegExp = FRESH_MACHINE_LACKS): Promise<string> {
  await mkdir(bin, { recursive: true });
  const repo = packageRoot();
  const dirs = [path.dirname(process.execPath), ...(process.env.PATH ?? '').split(path.delimiter)];
  const seen = new Set<string>();
  for (const dir of dirs) {
    if (dir === '' || path.resolve(dir).startsWith(repo) || dir.includes('node_modules')) continue;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (seen.has(name) || lacks.test(name)) continue;
      seen.add(name);
      await symlink(path.join(dir, name), path.join(bin, name));
    }
  }
  return bin;
}

/** The test process's environment without npm's, vitest's or Helix's variables, with PATH = `bin`. */
export function freshEnv(bin: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|NPM_|HELIX_|VITEST|__VITEST|NODE_OPTIONS$|NODE_ENV$|INIT_CWD$|PATH$)/.test(key)) continue;
    env[key] = value;
  }
  env.PATH = bin;
  return env;
}

/**
 * Copies the working tree as git sees it (tracked and untracked files, not ignored ones, so
 * uncommitted changes are what is tested) to `dest`, leaving out node_modules, dist and .helix.
 */
export async function copyWorkingTree(dest: string): Promise<void> {
  const root = packageRoot();
  const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  for (const file of listed.split('\0')) {
    if (file === '' || /^(node_modules|dist|\.helix)(\/|$)/.test(file) || !existsSync(path.join(root, file))) continue;
    await mkdir(path.dirname(path.join(dest, file)), { recursive: true });
    await copyFile(path.join(root, file), path.join(dest, file));
  }
}

/** How a command ended and what it printed. */
export interface CommandRun {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command args` in `cwd` with `env`; after `killAfterMs` its whole process group is killed (shows as SIGKILL). */
export function runCommand(
  command: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; killAfterMs: number },
): Promise<CommandRun> {
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }, opts.killAfterMs);
  return new Promise((resolve) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: `spawn failed: ${error.message}`, stdout, stderr });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr });
    });
  });
}
