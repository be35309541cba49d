// Shared helpers of the files, artifacts and identity checks: the built CLI as a bounded child
// process, a file outside the toolpack holding a marker that must never be quoted, a scan of
// what a refusal printed for leaks, and a process that keeps swapping a file while the host reads.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../host/1-base/paths.js';
import { CheckFailure, expect, type CheckContext } from '../check.js';

/** What a CLI run printed, how it ended and how long it took. */
export interface CliRun {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** The built CLI of this package. */
export const CLI_PATH = (): string => path.join(packageRoot(), 'dist', 'cli', 'main.js');

/** Runs `helix ...args` as a child process; killed (code SIGKILL) after `killAfterMs` (default 60 s). */
export function runHelix(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; killAfterMs?: number; stdin?: string } = {},
): Promise<CliRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI_PATH(), ...args], {
    cwd: opts.cwd ?? packageRoot(),
    env: opts.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  child.stdin.end(opts.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 60_000);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr, ms: Math.round(performance.now() - t0) });
    }),
  );
}

/** Fails unless a CLI run ended with `code`; the message shows what it printed. */
export function expectExit(run: CliRun, code: number, what: string): void {
  expect(
    run.code === code,
    `${what}: exit ${String(run.code)}, expected ${code}; stderr: ${run.stderr.slice(0, 600)} stdout: ${run.stdout.slice(0, 300)}`,
  );
}

/** A marker no refusal may ever print. */
export const MARKER = 'OUTSIDE-MARKER-c0nf-7f3a';
/** The value of an environment variable set for the host's children: /proc/self/environ would hold it. */
export const ENV_MARKER = 'env-marker-c0nf-91d4';

/** Writes `outside.json` (a schema whose title is MARKER) beside the check's plugins; returns its path. */
export function outsideFile(ctx: CheckContext, name = 'outside.json'): string {
  const file = path.join(ctx.env.dir, name);
  writeFileSync(file, JSON.stringify({ type: 'object', title: MARKER, properties: { [MARKER]: { const: MARKER } } }));
  return file;
}

/** What a refusal must not show: the markers, /etc/passwd's first line, an internal error, a stack trace. */
const LEAKS: ReadonlyArray<string | RegExp> = [MARKER, ENV_MARKER, 'root:x:0', /internal error/i, /\n\s+at .+:\d+:\d+\)?(\n|$)/];

/** Fails when `text` quotes a marker or shows an internal error or a stack trace. */
export function expectNoLeak(text: string, where: string): void {
  for (const leak of LEAKS) {
    const hit = typeof leak === 'string' ? text.includes(leak) : leak.test(text);
    if (hit) throw new CheckFailure(`${where} shows ${String(leak)}: ${text.slice(0, 800)}`);
  }
}

/** The violations of a refused start, as lines. */
export function violationsOf(refusal: { details: Record<string, unknown> }): string[] {
  const v = refusal.details.violations;
  return Array.isArray(v) ? v.map(String) : [];
}

/** Fails unless some violation matches each pattern; returns the lines. */
export function expectViolations(
  refusal: { code: string; message: string; details: Record<string, unknown> },
  code: string,
  patterns: readonly RegExp[],
): string[] {
  expect(refusal.code === code, `refused with ${refusal.code}, not ${code}: ${refusal.message}`);
  const lines = violationsOf(refusal);
  for (const p of patterns)
    expect(
      lines.some((l) => p.test(l)),
      `no violation matches ${String(p)}; violations: ${JSON.stringify(lines).slice(0, 1500)}`,
    );
  expectNoLeak(`${refusal.message}\n${JSON.stringify(refusal.details)}`, 'the refusal');
  return lines;
}

/**
 * A child process that swaps `target` between a regular file holding `inside` and a symbolic
 * link to `outside`, as fast as it can, for at most `ms`; stop() kills it and waits.
 */
export function swapper(target: string, inside: string, outside: string, ms = 5000): { child: ChildProcess; stop(): Promise<void> } {
  const script = `
    const fs = require('node:fs');
    const [target, inside, outside, ms] = JSON.parse(process.argv[1]);
    const end = Date.now() + ms;
    const reg = target + '.reg-tmp', lnk = target + '.lnk-tmp';
    let n = 0;
    while (Date.now() < end) {
      try { fs.rmSync(lnk, { force: true }); fs.symlinkSync(outside, lnk); fs.renameSync(lnk, target); } catch {}
      try { fs.writeFileSync(reg, inside); fs.renameSync(reg, target); } catch {}
      n++;
    }
    process.stdout.write(String(n));`;
  const child = spawn(process.execPath, ['-e', script, JSON.stringify([target, inside, outside, ms])], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const done = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await done;
    },
  };
}
