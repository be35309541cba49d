// Runs the built `helix` CLI in a child process and measures it: wall time and its peak memory
// from /proc while it runs. The peak of anonymous memory (RssAnon: heaps, stacks, buffers) is what
// must stay flat in the size of the file; the high-water mark of all resident pages (VmHWM) also
// counts the store's memory-mapped LMDB file, page cache the kernel can drop, which grows with
// what a call reads. For the big-data test and `npm run bigdata`.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../host/1-base/paths.js';

/** How one CLI process ended. */
export interface MeasuredRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Peak anonymous resident memory in bytes (RssAnon, sampled every 200 ms); 0 where /proc is not there to read. */
  readonly peakAnonBytes: number;
  /** High-water mark of all resident memory in bytes (VmHWM), mapped store pages included. */
  readonly peakRssBytes: number;
  readonly wallMs: number;
}

/** VmHWM and RssAnon of a process, in bytes (0 when it cannot be read). */
function memoryOf(pid: number | undefined): { hwm: number; anon: number } {
  if (pid === undefined) return { hwm: 0, anon: 0 };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { hwm: kb('VmHWM'), anon: kb('RssAnon') };
  } catch {
    return { hwm: 0, anon: 0 };
  }
}

/** Runs `helix ...args` in `cwd`, with $PWD set to it (the default policy's import root). */
export function runMeasuredCli(args: readonly string[], cwd: string): Promise<MeasuredRun> {
  const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, PWD: cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    let anon = 0;
    const sample = (): void => {
      const m = memoryOf(child.pid);
      peak = Math.max(peak, m.hwm);
      anon = Math.max(anon, m.anon);
    };
    const poll = setInterval(sample, 200);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('exit', sample);
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakAnonBytes: anon, peakRssBytes: peak, wallMs: Math.round(performance.now() - started) });
    });
  });
}
