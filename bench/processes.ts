// Child processes timed from spawn to exit: the real `helix` CLI (optionally with its peak RSS,
// read by a preloaded probe) and the native peers it is measured against (seqkit, sha256sum).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../host/1-base/paths.js';

/** How a timed process ended. */
export interface Timed {
  /** Wall time from spawn to exit, ms. */
  readonly ms: number;
  readonly stdout: string;
  readonly code: number;
  /** Peak resident set, bytes, and CPU time, ms, of a `helix` process timed with `probe`. */
  readonly maxRssBytes?: number;
  readonly cpuMs?: number;
}

/** Options of timeProcess. */
export interface TimedOptions {
  readonly cwd?: string;
  /** Keep stdout (default: discarded, so the pipe costs nothing). */
  readonly captureStdout?: boolean;
  /** Exit codes that count as a normal end (default 0 only). */
  readonly okCodes?: readonly number[];
  /** Added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** The built CLI. */
export function cliPath(): string {
  return path.join(packageRoot(), 'dist', 'cli', 'main.js');
}

const PROBE = path.join(packageRoot(), 'dist', 'bench', 'usage-probe.js');

/** Runs `command args` to its end; throws with its stderr when it exits with another code than `okCodes`. */
export function timeProcess(command: string, args: readonly string[], options: TimedOptions = {}): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', options.captureStdout === true ? 'pipe' : 'ignore', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = performance.now() - t;
      const stdout = Buffer.concat(out).toString('utf8');
      if (code === null || !(options.okCodes ?? [0]).includes(code)) {
        const why = signal === null ? `exit ${code}` : `signal ${signal}`;
        const detail = (Buffer.concat(err).toString('utf8').trim() || stdout.trim()).split('\n').slice(0, 3).join(' / ');
        reject(new Error(`${path.basename(command)} ${args.slice(0, 2).join(' ')}: ${why}: ${detail.slice(0, 400)}`));
        return;
      }
      resolve({ ms, stdout, code });
    });
  });
}

/** Runs `helix ARGS` (node on the built CLI); with `probe`, also its peak resident set and CPU time. */
export async function timeHelix(args: readonly string[], options: TimedOptions & { readonly probe?: boolean } = {}): Promise<Timed> {
  if (options.probe !== true) return timeProcess(process.execPath, [cliPath(), ...args], options);
  const dir = mkdtempSync(path.join(tmpdir(), 'helix-bench-usage-'));
  const file = path.join(dir, 'usage.json');
  try {
    const probeArgs = [`--import=${pathToFileURL(PROBE).href}`, cliPath(), ...args];
    const timed = await timeProcess(process.execPath, probeArgs, { ...options, env: { ...options.env, HELIX_BENCH_USAGE_FILE: file } });
    const usage = JSON.parse(readFileSync(file, 'utf8')) as { maxRssBytes: number; cpuMs: number };
    return { ...timed, ...usage };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Throws a plain line naming the missing command and how to install it. */
export function requireCommand(command: string, install: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
  if (!found)
    throw new Error(
      `${command} is not installed: the benchmark measures Helix against it. Install it (${install}) and run the benchmark again.`,
    );
}
