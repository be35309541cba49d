// The processes and homes the store checks set up: a live owner and a dead pid, a helix call
// recorded running, an import killed halfway, a damaged copy of a sound store file, and the check
// that every command a reviewer would run refuses a damaged home the same way.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ownerOf } from '../../../host/5-host/store-upkeep.js';
import { CheckFailure, expect, type CheckContext } from '../../check.js';
import {
  expectCleanError,
  fileSize,
  firstLine,
  helix,
  kill9,
  pageSizeOf,
  patchFile,
  startHelix,
  storeFile,
  until,
  withDiagnostics,
} from '../../kit/store-kit.js';
import { cliPolicy, seed, sha256File, type Seeded } from './shared.js';

/** A long-lived process of its own (not a helix process): an owner that is alive. */
export function sleeper(ctx: CheckContext): { pid: number; started_at: number; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  ctx.defer(() => kill9(child));
  return { pid: child.pid!, started_at: ownerOf(child.pid!).started_at, stop: () => kill9(child) };
}

/** A pid that belonged to a process that has exited. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

/** Starts `helix call s.forever` on `home` and resolves once its run is recorded `running` (its start committed). */
export async function foreverRun(
  ctx: CheckContext,
  home: string,
  tool = 's.forever',
  input: unknown = {},
): Promise<{ proc: ReturnType<typeof startHelix>; runId: string; ms: number }> {
  const t0 = Date.now();
  const proc = startHelix(
    ['call', tool, '--toolpacks', await ctx.toolpacksDir(), '--home', home, '--policy', cliPolicy(ctx), '--input', JSON.stringify(input)],
    { timeoutMs: 120_000 },
  );
  ctx.defer(() => kill9(proc.child));
  let runId: string | undefined;
  await until(
    `the run of ${tool} to be recorded running`,
    async () => {
      if (proc.child.exitCode !== null)
        throw new CheckFailure(`helix call ${tool} ended early (exit ${proc.child.exitCode}): ${proc.stderr().slice(0, 300)}`);
      if (!existsSync(storeFile(home))) return false;
      await withDiagnostics(home, (store) => {
        for (const a of store.activeRuns()) if (a.owner.pid === proc.pid) runId = a.runId;
      });
      return runId !== undefined;
    },
    60_000,
    100,
  );
  return { proc, runId: runId!, ms: Date.now() - t0 };
}

/** Starts `helix artifact import file` and SIGKILLs it once the store file passes `killAt` bytes. */
export async function killedImport(ctx: CheckContext, home: string, file: string, killAt: number): Promise<{ fileBytes: number }> {
  const proc = startHelix(['artifact', 'import', file, '--home', home, '--policy', cliPolicy(ctx)], { timeoutMs: 120_000 });
  while (proc.child.exitCode === null && fileSize(storeFile(home)) < killAt) await new Promise((r) => setTimeout(r, 2));
  await kill9(proc.child);
  const ended = await proc.ended;
  expect(
    ended.signal === 'SIGKILL',
    `the import ended by itself (exit ${ended.code}) before it could be killed at ${killAt} bytes: ${ended.stderr.slice(0, 200)}`,
  );
  return { fileBytes: fileSize(storeFile(home)) };
}

/** A sound store file (copied from a seeded home) placed in a fresh home with `bytes` written at `offset`. */
export function damagedCopy(sound: string, home: string, edits: ReadonlyArray<readonly [number, Buffer]>): string {
  mkdirSync(home, { recursive: true });
  const file = storeFile(home);
  copyFileSync(sound, file);
  for (const [offset, bytes] of edits) patchFile(file, offset, bytes);
  return file;
}

/** Each command a reviewer would run on a home must refuse the same way; the file stays byte for byte as it was. */
export async function expectRefusedEverywhere(
  ctx: CheckContext,
  home: string,
  code: string,
  exit: number,
  problem: RegExp,
  label: string,
  withCall = false,
): Promise<string> {
  const file = storeFile(home);
  const before = statSync(file, { throwIfNoEntry: false })?.isFile() === true ? sha256File(file) : undefined;
  const commands: string[][] = [
    ['runs', 'list', '--home', home],
    ['store', 'check', '--home', home],
    ...(withCall
      ? [['call', 's.echo', '--toolpacks', await ctx.toolpacksDir(), '--home', home, '--policy', cliPolicy(ctx), '--input', '{"n":1}']]
      : []),
  ];
  let first = '';
  const exits = await Promise.all(commands.map((args) => helix(args)));
  for (const [i, args] of commands.entries()) {
    const r = exits[i]!;
    expectCleanError(r, code, exit, `${label}: helix ${args.slice(0, 2).join(' ')}`);
    expect(problem.test(r.stderr), `${label}: helix ${args.slice(0, 2).join(' ')} does not say ${problem}: ${firstLine(r.stderr)}`);
    first ||= firstLine(r.stderr);
  }
  if (before !== undefined) expect(sha256File(file) === before, `${label}: the refusal changed the store file`);
  ctx.observe(label, first);
  return first;
}

/** The seeded home's store file, once per check. */
export async function soundFile(ctx: CheckContext): Promise<{ file: string; pageSize: number; seeded: Seeded }> {
  const seeded = await seed(ctx, path.join(ctx.env.dir, 'sound'));
  const file = storeFile(seeded.home);
  return { file, pageSize: pageSizeOf(file), seeded };
}
