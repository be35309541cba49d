// Runs the built `helix` CLI in a child process to its end: exit code, signal, stdout, stderr.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../host/1-base/paths.js';

/** The built CLI entry point. */
export const CLI = path.join(packageRoot(), 'dist', 'cli', 'main.js');

/** How a CLI process ended. */
export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `helix ...args` in `cwd` (default the package root) and resolves when it has ended. */
export function runCli(args: readonly string[], cwd: string = packageRoot()): Promise<CliExit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
