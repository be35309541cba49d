// Runs the built `helix` CLI in a child process and measures it: wall time and the peak resident
// memory of the process (VmHWM from /proc, read while it runs and as it exits). For the big-data
// test and `npm run bigdata`, which must show memory flat in the size of the file.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../host/paths.js';

/** How one CLI process ended. */
export interface MeasuredRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Peak resident memory in bytes; 0 where /proc is not there to read. */
  readonly peakRssBytes: number;
  readonly wallMs: number;
}

function vmHwm(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0;
  }
}

/** Runs `helix ...args` in `cwd`, with $PWD set to it (the default policy's import root). */
export function runMeasuredCli(args: readonly string[], cwd: string): Promise<MeasuredRun> {
  const cli = path.join(packageRoot(), 'dist', 'host', 'cli', 'main.js');
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, PWD: cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, vmHwm(child.pid))), 200);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('exit', () => (peak = Math.max(peak, vmHwm(child.pid))));
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakRssBytes: peak, wallMs: Math.round(performance.now() - started) });
    });
  });
}
