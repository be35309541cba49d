// Runs the built `helix` CLI as a child process and collects what it printed, with a generous
// bound on the wait: a command that hangs is killed and shows as SIGKILL, never as a pass.
import { spawn } from 'node:child_process';
import { packageRoot } from '../../host/1-base/paths.js';
import { CLI } from '../fixtures/mcp/serve.js';

/** What a CLI run printed and how it ended; `maxRssKb` with `measure`. */
export interface CliRun {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
  readonly maxRssKb?: number;
}

/** Options of runCli. */
export interface CliRunOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Kill the process after this long (default 120 s). */
  readonly killAfterMs?: number;
  /** Report the process's peak resident set size, printed by an exit hook loaded before the CLI. */
  readonly measure?: boolean;
}

const RSS_HOOK = 'data:text/javascript,process.on("exit",()=>process.stderr.write("maxrss_kb="+process.resourceUsage().maxRSS+"\\n"))';

/** Runs `helix ...args` from the package root. */
export function runCli(args: readonly string[], opts: CliRunOptions = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [...(opts.measure ? ['--import', RSS_HOOK] : []), CLI, ...args], {
    cwd: packageRoot(),
    env: opts.env ?? process.env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 120_000);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const rss = /maxrss_kb=(\d+)\n/.exec(stderr);
      resolve({
        code: code ?? signal ?? 'unknown',
        stdout,
        stderr: stderr.replace(/maxrss_kb=\d+\n/, ''),
        ...(rss ? { maxRssKb: Number(rss[1]) } : {}),
      });
    }),
  );
}
