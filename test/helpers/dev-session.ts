// `helix dev` as a child process, read one watch cycle at a time: each cycle ends with the line
// that says it watches again, and each wait looks only at what was printed since the last one.
import { spawn } from 'node:child_process';

/** A running `helix dev`. */
export interface DevSession {
  /** Waits for the next "watching . for changes" line, returning what was printed up to it. */
  cycle(what: string): Promise<string>;
  /** What was printed on stdout since the last cycle, and all of stderr. */
  rest(): { stdout: string; stderr: string };
  /** Sends SIGINT and resolves with the exit code (or signal). */
  interrupt(): Promise<number | string>;
  /** Kills it if still running. */
  kill(): void;
}

/** Starts `command ...args` (which runs `helix dev`) in `cwd`; killed after `killAfterMs`, a cycle waits at most `cycleMs`. */
export function startDev(
  command: string,
  args: readonly string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; killAfterMs: number; cycleMs: number },
): DevSession {
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
  let mark = 0;
  return {
    async cycle(what) {
      for (const deadline = Date.now() + opts.cycleMs; ; ) {
        const text = stdout.slice(mark);
        if (/\nwatching \. for changes \(Ctrl-C to stop\)\n/.test(text)) {
          mark = stdout.length;
          return text;
        }
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`helix dev never printed ${what}; stdout:\n${stdout}\nstderr:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    rest: () => ({ stdout: stdout.slice(mark), stderr }),
    interrupt() {
      child.kill('SIGINT');
      return exited;
    },
    kill() {
      clearTimeout(killer);
      child.kill('SIGKILL');
    },
  };
}
