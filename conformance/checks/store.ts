// Conformance checks: the store. A store file with a damaged header, files that are not what they
// claim, records and chunks tampered with, processes killed mid-run, several processes on one
// store, a hostile process rewriting LMDB's lock region, pending writes and `helix gc` beside
// live writers, compaction, and `helix store check` finding each kind of damage. Every check
// drives the real thing: the built CLI as child processes, real LMDB files, the check's host.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  statSync,
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  existsSync,
  chownSync,
} from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../host/1-base/paths.js';
import type { JournalEntry, RunRecord } from '../../abi/index.js';
import { isHelixError } from '../../abi/index.js';
import { hostStore } from '../../host/5-host/host.js';
import { createHost, type Host } from '../../host/5-host/host.js';
import { getRun, runEvents } from '../../host/4-calls/runs/run-store.js';
import type { VerifyReport } from '../../host/4-calls/runs/verify.js';
import { readAudit } from '../../host/3-store/audit.js';
import { discardBlob, writeChunks } from '../../host/3-store/blobs.js';
import type { CheckReport } from '../../host/3-store/check.js';
import { LOCK_TXNID_AT } from '../../host/3-store/commit-base.js';
import { COMPACTING_MARKER } from '../../host/3-store/compact.js';
import { collectGarbage, type GcReport } from '../../host/3-store/gc.js';
import { newestCommitIn } from '../../host/3-store/header.js';
import { LIFECYCLE_LOCK } from '../../host/3-store/lifecycle-lock.js';
import { readModuleRecord } from '../../host/3-store/modules.js';
import { processStartMs } from '../../host/3-store/owner.js';
import { PENDING_HEADER } from '../../host/3-store/pending.js';
import { rawDatabases } from '../../host/3-store/raw-access.js';
import { readActiveRuns } from '../../host/3-store/runs.js';
import { keyText } from '../../host/3-store/walk.js';
import { loadPolicy } from '../../host/4-calls/policy/load-policy.js';
import { CheckFailure, expect, expectOutcome, expectSuccess, type Check, type CheckContext, type PackSpec } from '../check.js';
import { echoModule, numberResultModule } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';
import {
  bigFile,
  CLI,
  expectCleanError,
  fileSize,
  firstLine,
  helix,
  kill9,
  LMDB,
  mappingsOf,
  namedDbRoot,
  newestMeta,
  pageSizeOf,
  patchFile,
  plant,
  problemLines,
  raw,
  readAt,
  restore,
  startHelix,
  storeCheck,
  storeFile,
  u16,
  u32,
  u64,
  UNDECODABLE,
  until,
  withStore,
  writeCheckPolicy,
  type CliExit,
  type Saved,
} from '../kit/store-kit.js';

const MIB = 1 << 20;
const SCRIPT_LIMITS = {
  ...DEFAULT_LIMITS,
  maxInputBytes: 100_000,
  maxOutputBytes: 100_000,
  fuel: 5e9,
  maxMemoryPages: 256,
  maxCapabilityCalls: 100,
};

/** The toolpacks every store check loads: an echo, a guest that never ends, the script guest (capabilities and outputs), a slow loop. */
const PACKS: readonly PackSpec[] = [
  { id: 's.echo', module: echoModule() },
  {
    id: 's.forever',
    module: numberResultModule('(loop $l (br $l)) (i64.const 0)'),
    manifest: { timeoutMs: 600_000, limits: { ...DEFAULT_LIMITS, fuel: 1e15 } },
  },
  {
    id: 's.script',
    module: '',
    guest: 'script.ts',
    inputSchema: { type: 'object', properties: { input: { type: 'string', 'x-helix-artifact': true } } },
    manifest: {
      timeoutMs: 600_000,
      limits: SCRIPT_LIMITS,
      capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.get', 'clock.now_unix', 'log.emit', 'artifact.stat'] },
    },
  },
  {
    id: 's.writer',
    module: '',
    guest: 'script.ts',
    manifest: {
      limits: SCRIPT_LIMITS,
      capabilities: { abiVersion: 1, allow: ['artifact.write'] },
      declaredOutputs: [{ role: 'report', type: 'text' }],
    },
  },
  {
    id: 's.stall',
    module: '',
    guest: 'script.ts',
    manifest: {
      timeoutMs: 600_000,
      limits: { ...SCRIPT_LIMITS, fuel: 1e15, maxCapabilityCalls: 1_000_000 },
      capabilities: { abiVersion: 1, allow: ['kv.put', 'log.emit', 'clock.now_unix'] },
    },
  },
  {
    id: 's.slow',
    // About a second of counting: a run still executing 200 ms after it began.
    module: numberResultModule(
      '(local.set $n (i32.const 0)) (loop $l (local.set $n (i32.add (local.get $n) (i32.const 1))) (br_if $l (i32.lt_u (local.get $n) (i32.const 500000000)))) (i64.extend_i32_u (local.get $n))',
    ),
    manifest: { timeoutMs: 60_000, limits: { ...DEFAULT_LIMITS, fuel: 1e11 } },
  },
  {
    id: 's.denied',
    module: echoModule(),
    manifest: { capabilities: { abiVersion: 1, allow: [] } },
  },
];

const packs = (): readonly PackSpec[] => PACKS;
/** The check's default policy, but s.denied is not allowed (a blocked run leaves an audit record). */
const policy = (_e: unknown, env: { dir: string; importRoot: string }): Record<string, unknown> => ({
  version: 1,
  tools: { allow: ['s.echo', 's.forever', 's.script', 's.writer', 's.stall', 's.slow', 'conformance.canary', 'helix.*'] },
  grants: { '*': ['clock.*', 'log.*', 'kv.*', 'artifact.*'] },
  ceilings: { maxImportBytes: 1_000_000_000 },
  paths: { importRoots: [env.importRoot], exportRoots: [path.join(env.dir, 'export')] },
});

const call = (name: string, args: Record<string, unknown>) => ({ name, args });

/** The policy file the check's CLI processes use (the check's own policy, written out). */
function cliPolicy(ctx: CheckContext): string {
  return writeCheckPolicy(ctx, policy(undefined, ctx.env));
}

/** What a seeded store holds. */
interface Seeded {
  readonly home: string;
  readonly script: RunRecord;
  readonly writer: RunRecord;
  readonly echo: RunRecord;
  readonly big: { id: string; sha256: string; chunks: string[] };
  readonly big2: { id: string; sha256: string; chunks: string[] };
  readonly small: { id: string; sha256: string };
}

/**
 * A store made by a real host in `home` (not the check's own): runs with kv, clock, log and a
 * journal, a run writing an output artifact, an echo run, a refused run (audit), imports of
 * 2.5 MB (three chunks) twice and a small text.
 */
async function seed(ctx: CheckContext, home: string): Promise<Seeded> {
  const host = await createHost({ pluginsDir: await ctx.pluginsDir(), policy: loadPolicy(cliPolicy(ctx)), home, warn: () => undefined });
  try {
    const chunksOf = (sha: string): string[] => [...rawDatabases(hostStore(host)).blobs.get(sha)!.chunks];
    const a = await host.artifacts.importInline(randomBytes(2_500_000), { label: 'three chunks', maxBytes: 1 << 30 });
    const b = await host.artifacts.importInline(randomBytes(2_400_000), { label: 'three more chunks', maxBytes: 1 << 30 });
    const small = await host.artifacts.importInline('>r1\nACGT\n', { label: 'input' });
    const s = await host.call({
      tool_id: 's.script',
      input: {
        input: small.id,
        calls: [
          call('kv.put', { key: 'k', value: { n: 1 } }),
          call('kv.get', { key: 'k' }),
          call('clock.now_unix', {}),
          call('log.emit', { event: 'hello', fields: {} }),
        ],
      },
      constraints: { idempotency_key: 'seed-script-run-0001' },
    } as never);
    expect(s.status === 'success', `seeding: the script run ended ${s.status} ${s.error?.code ?? ''} ${s.error?.message ?? ''}`);
    const w = await host.call({
      tool_id: 's.writer',
      input: {
        calls: [
          call('artifact.write', { role: 'report', data: 'line 1\n' }),
          call('artifact.write', { role: 'report', data: 'line 2\n', final: true }),
        ],
      },
    });
    expect(w.status === 'success', `seeding: the writer run ended ${w.status} ${w.error?.code ?? ''} ${w.error?.message ?? ''}`);
    const e = await host.call({ tool_id: 's.echo', input: { n: 1 } });
    expect(e.status === 'success', `seeding: the echo run ended ${e.status}`);
    const denied = await host.call({ tool_id: 's.denied', input: {} });
    expect(denied.error?.code === 'A-AUTH-TOOL-DENIED', `seeding: s.denied was not refused: ${denied.status} ${denied.error?.code ?? ''}`);
    const runOf = (id: string | null): RunRecord => getRun(hostStore(host), id!)!;
    return {
      home,
      script: runOf(s.run_id),
      writer: runOf(w.run_id),
      echo: runOf(e.run_id),
      big: { id: a.id, sha256: a.sha256, chunks: chunksOf(a.sha256) },
      big2: { id: b.id, sha256: b.sha256, chunks: chunksOf(b.sha256) },
      small: { id: small.id, sha256: small.sha256 },
    };
  } finally {
    await host.close();
  }
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const sha256File = (file: string): string => sha256(readFileSync(file));

/** A long-lived process of its own (not a helix process): an owner that is alive. */
function sleeper(ctx: CheckContext): { pid: number; started_at: number; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  ctx.defer(() => kill9(child));
  return { pid: child.pid!, started_at: processStartMs(child.pid!) ?? Date.now(), stop: () => kill9(child) };
}

/** A pid that belonged to a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

/** Starts `helix call s.forever` on `home` and resolves once its run is recorded `running` (its start committed). */
async function foreverRun(
  ctx: CheckContext,
  home: string,
  tool = 's.forever',
  input: unknown = {},
): Promise<{ proc: ReturnType<typeof startHelix>; runId: string; ms: number }> {
  const t0 = Date.now();
  const proc = startHelix(
    ['call', tool, '--plugins', await ctx.pluginsDir(), '--home', home, '--policy', cliPolicy(ctx), '--input', JSON.stringify(input)],
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
      await withStore(home, (store) => {
        for (const a of readActiveRuns(store)) if (a.owner.pid === proc.pid) runId = a.runId;
      });
      return runId !== undefined;
    },
    60_000,
    100,
  );
  return { proc, runId: runId!, ms: Date.now() - t0 };
}

/** Starts `helix artifact import file` and SIGKILLs it once the store file passes `killAt` bytes. */
async function killedImport(ctx: CheckContext, home: string, file: string, killAt: number): Promise<{ fileBytes: number }> {
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
function damagedCopy(sound: string, home: string, edits: ReadonlyArray<readonly [number, Buffer]>): string {
  mkdirSync(home, { recursive: true });
  const file = storeFile(home);
  copyFileSync(sound, file);
  for (const [offset, bytes] of edits) patchFile(file, offset, bytes);
  return file;
}

/** Each command a reviewer would run on a home must refuse the same way; the file stays byte for byte as it was. */
async function expectRefusedEverywhere(
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
      ? [['call', 's.echo', '--plugins', await ctx.pluginsDir(), '--home', home, '--policy', cliPolicy(ctx), '--input', '{"n":1}']]
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
async function soundFile(ctx: CheckContext): Promise<{ file: string; pageSize: number; seeded: Seeded }> {
  const seeded = await seed(ctx, path.join(ctx.env.dir, 'sound'));
  const file = storeFile(seeded.home);
  return { file, pageSize: pageSizeOf(file), seeded };
}

/** Store check counts of every database gc must never touch. */
const NEVER_COLLECTED = [
  'runs',
  'artifacts',
  'artifacts_by_time',
  'run_events',
  'run_journal',
  'audit',
  'kv',
  'modules',
  'param_sets',
  'policies',
  'idempotency',
] as const;

/** Plants, runs `helix store check` (text and JSON), restores, checks clean again. */
async function plantedCheck(
  ctx: CheckContext,
  home: string,
  damage: (store: Parameters<typeof plant>[0]) => Promise<Saved[]>,
): Promise<{ text: CliExit; report: CheckReport }> {
  const saved = await withStore(home, damage);
  const text = await helix(['store', 'check', '--home', home]);
  const { report, exit } = await storeCheck(home);
  expect(
    text.code === 1 && exit.code === 1,
    `helix store check exited ${text.code} (text) and ${exit.code} (--json) on a damaged store, not 1`,
  );
  expect(text.stderr === '', `helix store check wrote to stderr: ${text.stderr.slice(0, 300)}`);
  expect(
    new RegExp(`: ${report.problem_count} problems?\\n$`).test(text.stdout),
    `the summary line does not count ${report.problem_count} problems: ${text.stdout.slice(-200)}`,
  );
  for (const p of report.problems)
    expect(
      text.stdout.includes(`${p.code} ${p.database} ${p.key}: ${p.message}\n`),
      `the text report lacks the line for ${p.code} ${p.database} ${p.key}`,
    );
  await withStore(home, (store) => restore(store, saved));
  const clean = await storeCheck(home);
  expect(
    clean.exit.code === 0 && clean.report.ok,
    `after the damage was restored, store check still finds: ${problemLines(clean.report).join('; ')}`,
  );
  ctx.note(`store check lines:\n${text.stdout.trim()}`);
  return { text, report };
}

/** Fails unless `report` lists a problem with this code, database and key (and message). */
function expectProblem(report: CheckReport, code: string, database: string, key: string, message?: RegExp): void {
  const found = report.problems.find((p) => p.code === code && p.database === database && p.key === key);
  expect(found !== undefined, `store check did not report ${code} ${database} ${key}; it reported: ${problemLines(report).join('; ')}`);
  if (message !== undefined)
    expect(message.test(found.message), `${code} ${database} ${key}: message "${found.message}" does not match ${message}`);
}

const flip = (bytes: Buffer, at: number): Buffer => {
  const b = Buffer.from(bytes);
  b[at] = b[at]! ^ 0x01;
  return b;
};

export const storeChecks: readonly Check[] = [
  // ---------------------------------------------------------------- the file (ABI-STORE-010..013)
  {
    id: 'store.header-magic-version-flag',
    title:
      'A store file whose meta pages lack the magic, the format version, the meta flag or their page number is refused before LMDB maps it',
    category: 'store',
    abi: ['ABI-STORE-010'],
    engines: ['helix'],
    expected:
      'runs list and store check (and, for the first case, call) each exit 3 with one D-DATA-STORE-HEADER naming the file and what is wrong, hinting at a backup and helix store check; the file is unchanged; an empty file is a new store',
    packs,
    policy,
    async run(ctx) {
      const { file: sound, pageSize } = await soundFile(ctx);
      const cases: Array<[string, Array<[number, Buffer]>, RegExp]> = [
        ['magic-meta0', [[24, u32(0)]], /meta page 0 lacks the LMDB magic number/],
        ['magic-meta1', [[pageSize + 24, u32(0x12345678)]], /meta page 1 lacks the LMDB magic number/],
        ['version', [[28, u32(7)]], /format version 7, not 2/],
        ['meta-flag', [[18, u16(0)]], /not marked as a meta page/],
        ['page-number', [[pageSize, u64(9n)]], /meta page 1 carries page number 9/],
      ];
      await Promise.all(
        cases.map(async ([label, edits, problem]) => {
          const home = path.join(ctx.env.dir, `h-${label}`);
          damagedCopy(sound, home, edits);
          const line = await expectRefusedEverywhere(ctx, home, 'D-DATA-STORE-HEADER', 3, problem, label, label === cases[0]![0]);
          expect(line.includes(storeFile(home)), `${label}: the refusal does not name the file: ${line}`);
          const r = await helix(['runs', 'list', '--home', home]);
          expect(
            /backup/.test(r.stderr) && /helix store check/.test(r.stderr),
            `${label}: the hint does not say to restore from a backup and run helix store check: ${r.stderr}`,
          );
        }),
      );
      const empty = path.join(ctx.env.dir, 'h-empty');
      mkdirSync(empty);
      writeFileSync(storeFile(empty), '');
      const listed = await helix(['runs', 'list', '--json', '--home', empty]);
      expect(
        listed.code === 0 && JSON.parse(listed.stdout).length === 0,
        `an empty store file is not a new store: exit ${listed.code} ${listed.stderr.slice(0, 200)}`,
      );
      ctx.observe('empty_file', 'opened as a new store, runs list []');
    },
  },
  {
    id: 'store.header-page-size-and-txnid',
    title:
      'A page size that is no power of two in 512..65536, differs between the metas, or a transaction id in the wrong meta page is refused',
    category: 'store',
    abi: ['ABI-STORE-011'],
    engines: ['helix'],
    expected: 'D-DATA-STORE-HEADER naming the page size or the misplaced transaction, exit 3 from every command, the file unchanged',
    packs,
    policy,
    async run(ctx) {
      const { file: sound, pageSize } = await soundFile(ctx);
      const txn0 = readAt(sound, 24 + 128, 8).readBigUInt64LE(0);
      const cases: Array<[string, Array<[number, Buffer]>, RegExp]> = [
        ['page-size-0', [[48, u32(0)]], /page size 0/],
        ['page-size-4097', [[48, u32(4097)]], /page size 4097/],
        ['page-size-256', [[48, u32(256)]], /page size 256/],
        ['page-size-128k', [[48, u32(131072)]], /page size 131072/],
        [
          'page-size-differs',
          [[pageSize + 48, u32(pageSize * 2)]],
          new RegExp(`meta page 1 has page size ${pageSize * 2}, meta page 0 has ${pageSize}`),
        ],
        [
          'txnid-odd-in-page-0',
          [[24 + 128, u64(txn0 === 0n ? 3n : txn0 | 1n)]],
          /meta page 0 holds transaction \d+, which belongs in meta page 1/,
        ],
      ];
      await Promise.all(
        cases.map(async ([label, edits, problem]) => {
          const home = path.join(ctx.env.dir, `h-${label}`);
          damagedCopy(sound, home, edits);
          await expectRefusedEverywhere(ctx, home, 'D-DATA-STORE-HEADER', 3, problem, label, label === cases[0]![0]);
        }),
      );
    },
  },
  {
    id: 'store.header-page-numbers-truncated',
    title: 'A truncated store file, a last page past the end, a tree root outside the file or a tree depth of 65535 is refused',
    category: 'store',
    abi: ['ABI-STORE-012'],
    engines: ['helix'],
    expected:
      'D-DATA-STORE-HEADER (exit 3) saying the file is too short, the last page lies beyond the file, the root is outside pages 2..last, or the depth is out of 1..32',
    packs,
    policy,
    async run(ctx) {
      const { file: sound, pageSize } = await soundFile(ctx);
      const cases: Array<[string, Array<[number, Buffer]>, RegExp, number?]> = [
        ['last-page-beyond', [[pageSize + 24 + 120, u64(1n << 40n)]], /meta page 1 says the last page is \d+, but the file has \d+ pages/],
        ['main-root-beyond', [[24 + 72 + 40, u64(1n << 30n)]], /root of the main tree at page \d+, outside pages 2-\d+/],
        ['free-root-page-1', [[pageSize + 24 + 24 + 40, u64(1n)]], /root of the free-page tree at page 1, outside/],
        ['main-depth-65535', [[24 + 72 + 6, u16(0xffff)]], /main tree depth 65535/],
        ['cut-inside-meta-1', [], /shorter than its two \d+-byte meta pages/, pageSize + 100],
        ['cut-to-10-bytes', [], /too short for an LMDB header/, 10],
        [
          'cut-to-half',
          [],
          /the last page is \d+, but the file has \d+ pages|outside pages/,
          Math.floor(readFileSync(sound).length / pageSize / 2) * pageSize,
        ],
      ];
      await Promise.all(
        cases.map(async ([label, edits, problem, cut]) => {
          const home = path.join(ctx.env.dir, `h-${label}`);
          const file = damagedCopy(sound, home, edits);
          if (cut !== undefined) truncateSync(file, cut);
          await expectRefusedEverywhere(ctx, home, 'D-DATA-STORE-HEADER', 3, problem, label, label === cases[0]![0]);
        }),
      );
    },
  },
  {
    id: 'store.not-a-regular-file',
    title:
      'A store file or lock file that is a directory, a FIFO or a link to a device, and a home the user cannot write, are refused by name',
    category: 'store',
    abi: ['ABI-STORE-013'],
    engines: ['helix'],
    expected:
      'P-PRECOND-STORE (exit 3) naming the file, never a hang on a FIFO nor a crash; for an unprivileged user a read-only home or store file is P-PRECOND-STORE too',
    packs,
    policy,
    async run(ctx) {
      const { file: sound } = await soundFile(ctx);
      const fresh = (label: string, withFile = true): string => {
        const home = path.join(ctx.env.dir, `h-${label}`);
        mkdirSync(home, { recursive: true });
        if (withFile) copyFileSync(sound, storeFile(home));
        return home;
      };
      const mkfifo = async (p: string): Promise<void> => {
        const c = spawn('mkfifo', [p], { stdio: 'ignore' });
        const code = await new Promise((r) => {
          c.once('exit', r);
          c.once('error', (e) => r(e.message));
        });
        expect(code === 0, `mkfifo ${p} failed`);
      };
      let home = fresh('store-dir', false);
      mkdirSync(storeFile(home));
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /is not a regular file/, 'store file is a directory', true);
      home = fresh('store-fifo', false);
      await mkfifo(storeFile(home));
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /is not a regular file/, 'store file is a FIFO');
      home = fresh('lock-dir');
      mkdirSync(`${storeFile(home)}-lock`);
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /lock file .* is not a regular file/, 'lock file is a directory');
      home = fresh('lock-fifo');
      await mkfifo(`${storeFile(home)}-lock`);
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /lock file .* is not a regular file/, 'lock file is a FIFO');
      home = fresh('lock-devnull');
      symlinkSync('/dev/null', `${storeFile(home)}-lock`);
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /lock file .* is not a regular file/, 'lock file links to /dev/null');
      if (process.getuid?.() === 0) {
        // As an unprivileged user (root passes every access check): a home and store file owned by root, read-only to others.
        chmodSync(ctx.env.dir, 0o755);
        home = fresh('read-only');
        chmodSync(home, 0o755);
        chmodSync(storeFile(home), 0o644);
        const r = await helix(['runs', 'list', '--home', home], { uid: 65534, gid: 65534, cwd: '/' });
        expectCleanError(r, 'P-PRECOND-STORE', 3, 'read-only home for uid 65534');
        expect(
          /not readable and writable/.test(r.stderr) && r.stderr.includes(home),
          `the refusal does not name the home and say it is not writable: ${firstLine(r.stderr)}`,
        );
        ctx.observe('read-only home (uid 65534)', firstLine(r.stderr));
        chownSync(storeFile(home), 65534, 65534);
        chownSync(home, 65534, 65534);
        chmodSync(storeFile(home), 0o444);
        const r2 = await helix(['runs', 'list', '--home', home], { uid: 65534, gid: 65534, cwd: '/' });
        expectCleanError(r2, 'P-PRECOND-STORE', 3, 'read-only store file for uid 65534');
        ctx.observe('read-only store file (uid 65534)', firstLine(r2.stderr));
      } else ctx.note('not root: the read-only cases ran as this user only through the checks above');
    },
  },

  // ---------------------------------------------------------------- damage (ABI-STORE-020..022)
  {
    id: 'store.damaged-run-record',
    title: 'A run record that does not decode is one D-DATA-RECORD-INVALID everywhere it is read, and the host goes on serving',
    category: 'store',
    abi: ['ABI-STORE-020'],
    engines: ['helix'],
    expected:
      'replaying call and run_get: terminal_error D-DATA-RECORD-INVALID with details {database: runs, key, problem, violations}; CLI runs list/show/verify: one clean error, exit 1; a replaying helix call prints one envelope and exits 1',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const first = await ctx.call('s.echo', { n: 1 });
      expectSuccess(first);
      const runId = first.run_id!;
      await plant(hostStore(host), 'runs', runId, UNDECODABLE);
      const replay = await ctx.call('s.echo', { n: 1 });
      expectOutcome(replay, 'terminal_error', 'D-DATA-RECORD-INVALID');
      const d = replay.error!.details as Record<string, unknown>;
      expect(
        d.database === 'runs' && d.key === runId && typeof d.problem === 'string' && Array.isArray(d.violations),
        `details are not {database: runs, key, problem, violations}: ${JSON.stringify(d)}`,
      );
      expectOutcome(await ctx.call('helix.run_get', { run_id: runId }), 'terminal_error', 'D-DATA-RECORD-INVALID');
      ctx.observe('envelope', { code: replay.error!.code, message: replay.error!.message, details: d });
      const home = host.home;
      for (const args of [
        ['runs', 'list'],
        ['runs', 'show', runId],
        ['verify', runId],
      ]) {
        const r = await helix([...args, '--home', home]);
        expectCleanError(r, 'D-DATA-RECORD-INVALID', 1, `helix ${args.join(' ')}`);
        expect(
          r.stderr.includes(`The record ${runId} in the store's runs database is damaged`),
          `helix ${args.join(' ')} does not name the record and database: ${firstLine(r.stderr)}`,
        );
      }
      const cli = await helix([
        'call',
        's.echo',
        '--plugins',
        await ctx.pluginsDir(),
        '--home',
        home,
        '--policy',
        cliPolicy(ctx),
        '--input',
        '{"n":1}',
        '--compact',
      ]);
      const lines = cli.stdout.trim().split('\n');
      expect(cli.code === 1 && lines.length === 1, `helix call on the damaged run: exit ${cli.code}, ${lines.length} lines of stdout`);
      const env = JSON.parse(lines[0]!) as { status: string; error?: { code: string } };
      expect(
        env.status === 'terminal_error' && env.error?.code === 'D-DATA-RECORD-INVALID',
        `helix call printed ${lines[0]!.slice(0, 200)}`,
      );
      expectSuccess(await ctx.call('s.echo', { n: 2 }));
    },
  },
  {
    id: 'store.record-key-and-text-mismatch',
    title:
      'A well-formed record under the wrong key, an artifact of the wrong shape and params text that does not hash to its key are refused on read',
    category: 'store',
    abi: ['ABI-STORE-020'],
    engines: ['helix'],
    expected:
      'runs show of a run holding another run\'s record: D-DATA-RECORD-INVALID "carries the run id"; artifact show of {id: 7}: D-DATA-RECORD-INVALID with its violations; runs show of a run whose params text was edited: D-DATA-CHECKSUM; each exit 1, one clean error',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      await withStore(s.home, async (store) => {
        await plant(store, 'runs', s.echo.run_id, { ...s.writer });
        await plant(store, 'artifacts', s.small.id, Buffer.from([0x81, 0xa2, 0x69, 0x64, 0x07]));
        const params = raw(store, 'params').get(s.script.params_hash) as string;
        await plant(store, 'params', s.script.params_hash, params.replace('}', ',"edited":true}'));
      });
      const swapped = await helix(['runs', 'show', s.echo.run_id, '--home', s.home]);
      expectCleanError(swapped, 'D-DATA-RECORD-INVALID', 1, 'runs show of a swapped record');
      expect(
        swapped.stderr.includes(`carries the run id ${s.writer.run_id}`),
        `the refusal does not say which id the record carries: ${firstLine(swapped.stderr)}`,
      );
      const shape = await helix(['artifact', 'show', s.small.id, '--home', s.home]);
      expectCleanError(shape, 'D-DATA-RECORD-INVALID', 1, 'artifact show of {id: 7}');
      expect(/\n {2}\S+: /.test(shape.stderr), `no violation listed: ${shape.stderr.slice(0, 300)}`);
      const text = await helix(['runs', 'show', s.script.run_id, '--home', s.home]);
      expectCleanError(text, 'D-DATA-CHECKSUM', 1, 'runs show with edited params');
      ctx.observe('swapped run record', firstLine(swapped.stderr));
      ctx.observe('artifact of the wrong shape', firstLine(shape.stderr));
      ctx.observe('params not hashing to key', firstLine(text.stderr));
    },
  },
  {
    id: 'store.lmdb-page-and-chunk-damage',
    title:
      'A B-tree page LMDB cannot read is D-DATA-STORE-DAMAGED naming the database; a flipped chunk byte is D-DATA-CHECKSUM on every read',
    category: 'store',
    abi: ['ABI-STORE-021'],
    engines: ['helix'],
    expected:
      "with the runs tree root page's flags zeroed, runs list exits 1 with D-DATA-STORE-DAMAGED naming runs (no crash) while artifact list still works; a flipped chunk makes artifact export and a call reading the artifact fail with D-DATA-CHECKSUM naming the blob",
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      // The chunk first (the tree damage below keeps the store from opening cleanly for writes).
      await withStore(s.home, async (store) => {
        const key = s.big.chunks[1]!;
        await plant(store, 'chunks', key, flip(Buffer.from(raw(store, 'chunks').getBinary(key)!), 100));
      });
      const out = path.join(ctx.env.dir, 'export', 'big.bin');
      const exported = await helix(['artifact', 'export', s.big.id, out, '--home', s.home, '--policy', cliPolicy(ctx)]);
      expectCleanError(exported, 'D-DATA-CHECKSUM', 1, 'artifact export of a flipped chunk');
      expect(
        exported.stderr.includes(s.big.sha256) || exported.stderr.includes(s.big.chunks[1]!),
        `the refusal names neither the blob nor the chunk: ${firstLine(exported.stderr)}`,
      );
      ctx.observe('export of flipped chunk', firstLine(exported.stderr));
      const reader = await createHost({
        pluginsDir: await ctx.pluginsDir(),
        policy: loadPolicy(cliPolicy(ctx)),
        home: s.home,
        warn: () => undefined,
      });
      try {
        const read = await reader.artifacts.readBytes(s.big.id, 1 << 30).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(
          isHelixError(read) && read.code === 'D-DATA-CHECKSUM',
          `a host reading the damaged artifact got ${isHelixError(read) ? read.code : String(read)}`,
        );
        ctx.observe('host read of the flipped chunk', `${read.code}: ${read.message}`);
      } finally {
        await reader.close();
      }

      const file = storeFile(s.home);
      const runs = namedDbRoot(file, 'runs');
      const ps = pageSizeOf(file);
      const at = Number(runs.root) * ps + LMDB.flagsAt;
      ctx.observe('runs tree', {
        root_page: String(runs.root),
        depth: runs.depth,
        flags_before: `0x${readAt(file, at, 2).readUInt16LE(0).toString(16)}`,
      });
      patchFile(file, at, u16(0));
      const listed = await helix(['runs', 'list', '--home', s.home]);
      // LMDB's C code prints its own diagnostic line to stderr before it returns MDB_CORRUPTED; Helix's error follows it.
      const lmdbLine = /^internal error, index points to a [0-9A-Fa-f]+ page!\?\n/;
      if (lmdbLine.test(listed.stderr)) ctx.note(`LMDB's own stderr line before Helix's error: ${firstLine(listed.stderr)}`);
      expectCleanError(
        { ...listed, stderr: listed.stderr.replace(lmdbLine, '') },
        'D-DATA-STORE-DAMAGED',
        1,
        'runs list over a damaged runs page',
      );
      expect(
        /helix: D-DATA-STORE-DAMAGED: .*runs database: MDB_(CORRUPTED|PAGE_NOTFOUND|INVALID)/.test(listed.stderr),
        `the refusal does not name the runs database and LMDB's error: ${listed.stderr.slice(0, 300)}`,
      );
      ctx.observe('runs list', listed.stderr.trim().split('\n').slice(0, 2));
      const artifacts = await helix(['artifact', 'list', '--json', '--home', s.home]);
      expect(artifacts.code === 0, `artifact list (another database) failed too: ${firstLine(artifacts.stderr)}`);
    },
  },
  {
    id: 'store.module-record-rebuilt',
    title: 'A damaged module record is rebuilt at host start with an audit record; other damaged records stay as they are',
    category: 'store',
    abi: ['ABI-STORE-022'],
    engines: ['helix'],
    expected:
      'the host starts, the module record reads back whole, audit holds store.module_record_rebuilt naming the digest and the damage; a damaged run record still answers D-DATA-RECORD-INVALID',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'home');
      const first = await createHost({
        pluginsDir: await ctx.pluginsDir(),
        policy: loadPolicy(cliPolicy(ctx)),
        home,
        warn: () => undefined,
      });
      const digest = first.tools().find((t) => t.id === 's.echo')!.moduleDigest!;
      const run = (await first.call({ tool_id: 's.echo', input: { n: 1 } })).run_id!;
      await first.close();
      await withStore(home, async (store) => {
        await plant(store, 'modules', digest, UNDECODABLE);
        await plant(store, 'runs', run, UNDECODABLE);
      });
      const host = await ctx.host();
      expect(host.home === home, `the check's host runs in ${host.home}, not ${home}`);
      const record = readModuleRecord(hostStore(host), digest);
      expect(record?.digest === digest, `the module record was not rebuilt: ${JSON.stringify(record)}`);
      const audit = readAudit(hostStore(host)).filter((a) => a.kind === 'store.module_record_rebuilt');
      expect(audit.length === 1 && (audit[0] as { digest?: string }).digest === digest, `audit holds ${JSON.stringify(audit)}`);
      const problem = String((audit[0] as { problem?: string }).problem ?? '');
      expect(/damaged|decoded/.test(problem), `the audit record does not name the damage: ${problem}`);
      ctx.observe('audit', audit[0]);
      expectOutcome(await ctx.call('helix.run_get', { run_id: run }), 'terminal_error', 'D-DATA-RECORD-INVALID');
    },
  },

  // ---------------------------------------------------------------- crashes (ABI-STORE-030, 034, 037)
  {
    id: 'store.killed-run-interrupted',
    title:
      "A run whose process is SIGKILLed is recorded interrupted by the first reader (another CLI process, or a host start); another host's run is left alone",
    category: 'store',
    abi: ['ABI-STORE-030', 'ABI-STORE-034'],
    engines: ['helix'],
    expected:
      "while executing past 200 ms the run is running under the child's pid; after kill -9 runs list shows it interrupted, owner null, finished_at set, events [started, interrupted {found_by: read}]; a run owned by another host stays running; a host start records found_by: startup",
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'killed');
      const one = await foreverRun(ctx, home);
      ctx.observe('first run seen running after (ms)', one.ms);
      const alive = JSON.parse((await helix(['runs', 'list', '--json', '--home', home])).stdout) as RunRecord[];
      expect(
        alive.some((r) => r.run_id === one.runId && r.status === 'running' && r.owner?.pid === one.proc.pid),
        `the live run is not listed running under pid ${one.proc.pid}: ${JSON.stringify(alive).slice(0, 300)}`,
      );
      await kill9(one.proc.child);
      const listed = await helix(['runs', 'list', '--json', '--home', home]);
      const run = (JSON.parse(listed.stdout) as RunRecord[]).find((r) => r.run_id === one.runId);
      expect(
        run?.status === 'interrupted' && run.owner === null && typeof run.finished_at === 'number',
        `after kill -9 the run is ${JSON.stringify(run)}`,
      );
      const shown = JSON.parse((await helix(['runs', 'show', one.runId, '--home', home])).stdout) as {
        events: Array<{ kind: string; detail?: { found_by?: string } }>;
        outputs: unknown[];
      };
      const kinds = shown.events.map((e) => `${e.kind}${e.detail?.found_by === undefined ? '' : `:${e.detail.found_by}`}`);
      expect(JSON.stringify(kinds) === JSON.stringify(['started', 'interrupted:read']), `events are ${kinds.join(', ')}`);
      ctx.observe('events after kill -9', kinds);

      const two = await foreverRun(ctx, home, 's.forever', { n: 2 });
      await kill9(two.proc.child);
      const foreign = { pid: two.proc.pid, hostname: 'another-host.example', started_at: 1 };
      const saved = await withStore(home, async (store) => {
        const r = raw(store, 'runs').get(two.runId) as RunRecord;
        return [await plant(store, 'runs', two.runId, { ...r, owner: foreign }), await plant(store, 'activeRuns', two.runId, foreign)];
      });
      const other = (JSON.parse((await helix(['runs', 'list', '--json', '--home', home])).stdout) as RunRecord[]).find(
        (r) => r.run_id === two.runId,
      );
      expect(
        other?.status === 'running' && other.owner?.hostname === foreign.hostname,
        `a run owned by another host was changed: ${JSON.stringify(other)}`,
      );
      await withStore(home, (store) => restore(store, saved));
      const host = await createHost({
        pluginsDir: await ctx.pluginsDir(),
        policy: loadPolicy(cliPolicy(ctx)),
        home,
        warn: () => undefined,
      });
      try {
        expect(
          host.interrupted.includes(two.runId),
          `the host start did not record ${two.runId} interrupted: ${JSON.stringify(host.interrupted)}`,
        );
        const events = runEvents(hostStore(host), two.runId).map(
          (e) =>
            `${e.kind}${(e.detail as { found_by?: string } | undefined)?.found_by === undefined ? '' : `:${(e.detail as { found_by: string }).found_by}`}`,
        );
        expect(events.join(',') === 'started,interrupted:startup', `events of the run found at startup: ${events.join(', ')}`);
        ctx.observe('events found at startup', events);
      } finally {
        await host.close();
      }
    },
  },
  {
    id: 'store.killed-mid-run-leaves-no-audit',
    title: 'A run killed mid-way after kv, log and clock calls leaves no journal entry and no audit record, only an interrupted run',
    category: 'store',
    abi: ['ABI-STORE-037', 'ABI-STORE-034'],
    engines: ['helix'],
    expected:
      'the child made its capability calls and kept calling (running, committed after 200 ms); after kill -9 the run is interrupted with no journal entries and no audit records of it; store check clean',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'killed');
      const r = await foreverRun(ctx, home, 's.stall', {
        calls: [call('kv.put', { key: 'k', value: 1 }), call('log.emit', { event: 'before-kill', fields: {} })],
        storm: 'clock.now_unix',
      });
      await new Promise((res) => setTimeout(res, 300));
      await kill9(r.proc.child);
      const counts = await withStore(home, (store) => {
        const journal = [...raw(store, 'journal').getKeys({ start: [r.runId, 0], end: [r.runId, Number.MAX_SAFE_INTEGER] })].length;
        const audit = readAudit(store).filter((a) => (a as { run_id?: string }).run_id === r.runId).length;
        return { journal, audit };
      });
      ctx.observe('after kill -9', counts);
      expect(
        counts.journal === 0 && counts.audit === 0,
        `the killed run left ${counts.journal} journal entries and ${counts.audit} audit records`,
      );
      const shown = JSON.parse((await helix(['runs', 'show', r.runId, '--home', home])).stdout) as RunRecord;
      expect(
        shown.status === 'interrupted' && shown.journal.entries === 0,
        `the run is ${shown.status} with ${shown.journal.entries} journal entries`,
      );
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check after the kill: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.killed-before-commit',
    title: "A process SIGKILLed 50 ms into a run, before the run's one commit, leaves nothing of the run in the store",
    category: 'store',
    abi: ['ABI-STORE-034'],
    engines: ['helix'],
    expected:
      'the child reports the run id and kills itself about 50 ms after the run began (under 200 ms); afterwards the store holds no run record, no event and no active run under that id, and store check is clean',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'early');
      const script = `const [hostJs, plugins, home, policyFile] = process.argv.slice(1);
const { createHost } = await import(hostJs);
const host = await createHost({ pluginsDir: plugins, policyFile, home, warn: () => {} });
host.call({ tool_id: 's.forever', input: {} }, { onRunStarted: (id) => { const t0 = performance.now(); setTimeout(() => process.stdout.write(id + ' ' + Math.round(performance.now() - t0) + '\\n', () => process.kill(process.pid, 'SIGKILL')), 50); } });`;
      const hostJs = pathToFileURL(path.join(packageRoot(), 'dist', 'host', '5-host', 'host.js')).href;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, hostJs, await ctx.pluginsDir(), home, cliPolicy(ctx)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      ctx.defer(() => kill9(child));
      let out = '';
      let err = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const signal = await new Promise((r) => child.once('exit', (_code, sig) => r(sig)));
      clearTimeout(timer);
      const [runId, ms] = out.trim().split(' ');
      expect(
        signal === 'SIGKILL' && /^run_[0-9a-f]{32}$/.test(runId ?? ''),
        `the child did not report a run and kill itself: ${out} ${err.slice(0, 300)}`,
      );
      ctx.observe('killed after the run began (ms)', Number(ms));
      expect(Number(ms) < 200, `the kill came ${ms} ms after the run began, not before its start could commit`);
      const left = await withStore(home, (store) => ({
        run: raw(store, 'runs').getBinary(runId!) !== undefined,
        events: [...raw(store, 'runEvents').getKeys({ start: [runId!, 0], end: [runId!, Number.MAX_SAFE_INTEGER] })].length,
        active: raw(store, 'activeRuns').getBinary(runId!) !== undefined,
      }));
      ctx.observe('left in the store', left);
      expect(!left.run && left.events === 0 && !left.active, `the run killed before its commit left ${JSON.stringify(left)}`);
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.run-commits-once',
    title:
      'A run of 40 capability calls commits once with its journal and audit; 16 runs ending together share commits; a run past 200 ms commits twice',
    category: 'store',
    abi: ['ABI-STORE-034', 'ABI-STORE-035', 'ABI-STORE-037'],
    engines: ['helix'],
    expected:
      'commits counted on the meta pages: 1 for the 40-call run (40 allowed audit records visible after), fewer than 16 for 16 concurrent runs, exactly 2 for a run still executing after 200 ms',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const commits = async (body: () => Promise<unknown>): Promise<number> => {
        await store.flushed();
        const before = newestCommitIn(host.storePath);
        await body();
        await store.flushed();
        return newestCommitIn(host.storePath) - before;
      };
      const storm = { calls: Array.from({ length: 40 }, () => call('clock.now_unix', {})) };
      expectSuccess(await ctx.call('s.script', { ...storm, warm: true }));
      let runId = '';
      const one = await commits(async () => {
        const r = await ctx.call('s.script', storm);
        expectSuccess(r);
        runId = r.run_id!;
      });
      const audit = readAudit(store).filter((a) => (a as { run_id?: string }).run_id === runId && a.kind === 'capability');
      ctx.observe('commits of a 40-call run', one);
      expect(one === 1, `a run of 40 capability calls took ${one} commits, not 1`);
      expect(audit.length === 40, `the run has ${audit.length} capability audit records, not 40`);
      const sixteen = await commits(async () => {
        const rs = await Promise.all(Array.from({ length: 16 }, (_, i) => ctx.call('s.echo', { together: i })));
        for (const r of rs) expectSuccess(r);
      });
      ctx.observe('commits of 16 concurrent runs', sixteen);
      expect(sixteen < 16, `16 concurrent runs took ${sixteen} commits: none shared`);
      let ms = 0;
      const slow = await commits(async () => {
        const t0 = performance.now();
        expectSuccess(await ctx.call('s.slow', {}));
        ms = performance.now() - t0;
      });
      ctx.observe('slow run', { ms: Math.round(ms), commits: slow });
      expect(ms > 250, `the slow run took only ${Math.round(ms)} ms; it must outlast 200 ms`);
      expect(slow === 2, `a run executing past 200 ms took ${slow} commits, not 2 (start, end)`);
    },
  },

  // ---------------------------------------------------------------- concurrency (ABI-STORE-001..007)
  {
    id: 'store.map-size-fixed',
    title: 'Every process maps the store at 1 TiB and never remaps it while another process grows the file',
    category: 'store',
    abi: ['ABI-STORE-001'],
    engines: ['helix'],
    expected:
      'one mapping of helix.mdb of exactly 2^40 bytes in this host and in a helix call process; after a 24 MiB import by a third process the call process still has that one mapping at the same address',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const mine = mappingsOf('self', host.storePath);
      expect(
        mine.length === 1 && mine[0]!.bytes === 1n << 40n,
        `this host maps the store as ${JSON.stringify(mine.map((m) => String(m.bytes)))}`,
      );
      const home = path.join(ctx.env.dir, 'other');
      const r = await foreverRun(ctx, home);
      const before = mappingsOf(r.proc.pid, storeFile(home));
      expect(
        before.length === 1 && before[0]!.bytes === 1n << 40n,
        `the helix call process maps the store as ${JSON.stringify(before.map((m) => String(m.bytes)))}`,
      );
      const sizeBefore = fileSize(storeFile(home));
      const data = bigFile(path.join(ctx.env.importRoot, 'grow.bin'), 24);
      const imported = await helix(['artifact', 'import', data, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(imported.code === 0, `the import failed: ${firstLine(imported.stderr)}`);
      const after = mappingsOf(r.proc.pid, storeFile(home));
      ctx.observe('mapping', {
        bytes: String(before[0]!.bytes),
        file_before: sizeBefore,
        file_after: fileSize(storeFile(home)),
        remapped: after.length !== 1 || after[0]!.start !== before[0]!.start,
      });
      expect(
        after.length === 1 && after[0]!.start === before[0]!.start && after[0]!.bytes === before[0]!.bytes,
        `the call process remapped the store: ${JSON.stringify(after.map((m) => [m.start.toString(16), String(m.bytes)]))}`,
      );
      await kill9(r.proc.child);
    },
  },
  {
    id: 'store.flush-on-calling-thread',
    title: 'Every flush of a commit is made by the thread that commits, before the call answers; no flushed-meta copy appears',
    category: 'store',
    abi: ['ABI-STORE-002', 'ABI-STORE-003'],
    engines: ['helix'],
    expected:
      "strace -f of helix call: every fdatasync/fsync/msync is on the main thread, at least one per commit; the run the call reported is readable by another process at once; lmdb-js's flushed-meta slot stays empty",
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'traced');
      const seeded = await helix(['runs', 'list', '--home', home]);
      expect(seeded.code === 0, `creating the store failed: ${seeded.stderr}`);
      const before = newestCommitIn(storeFile(home));
      const trace = path.join(ctx.env.dir, 'strace.txt');
      const traced = spawn(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=execve,fdatasync,fsync,msync,sync_file_range',
          '-o',
          trace,
          process.execPath,
          CLI,
          'call',
          's.script',
          '--plugins',
          await ctx.pluginsDir(),
          '--home',
          home,
          '--policy',
          cliPolicy(ctx),
          '--compact',
          '--input',
          JSON.stringify({ calls: [call('kv.put', { key: 'k', value: 1 })] }),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      traced.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => traced.kill('SIGKILL'), 60_000);
      const code = await new Promise((r) => {
        traced.once('exit', r);
        traced.once('error', (e) => r(`not started (${e.message}): this check needs strace installed`));
      });
      clearTimeout(timer);
      expect(code === 0, `strace helix call exited ${code}: ${out.slice(0, 200)}`);
      const runId = (JSON.parse(out.trim().split('\n')[0]!) as { run_id: string }).run_id;
      const shown = await helix(['runs', 'show', runId, '--home', home]);
      expect(
        shown.code === 0 && (JSON.parse(shown.stdout) as RunRecord).status === 'succeeded',
        `the reported run is not in the store for another process: ${firstLine(shown.stderr)}`,
      );
      const lines = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
      const main = Number(/^(\d+)\s+execve\(/.exec(lines.find((l) => l.includes(`execve("${process.execPath}"`)) ?? '')?.[1]);
      const flushes = lines.filter((l) => /\s(fdatasync|fsync|msync|sync_file_range)\(/.test(l));
      const offThread = flushes.filter((l) => Number(l.split(/\s+/)[0]) !== main);
      const commits = newestCommitIn(storeFile(home)) - before;
      ctx.observe('flushes', { main_thread: main, flushes: flushes.length, off_main_thread: offThread.length, commits });
      expect(Number.isFinite(main) && flushes.length > 0, `no flush traced (main thread ${main})`);
      expect(offThread.length === 0, `flushes made off the main thread: ${offThread.slice(0, 3).join(' | ')}`);
      expect(flushes.length >= commits, `${commits} commits but only ${flushes.length} flushes`);
      const ps = pageSizeOf(storeFile(home));
      const flushedSlot = readAt(storeFile(home), ps / 2 + LMDB.pageHeader + LMDB.meta.txnid, 8).readBigUInt64LE(0);
      ctx.observe('flushed-meta slot txnid', String(flushedSlot));
      expect(
        flushedSlot === 0n,
        `lmdb-js's flushed-meta slot holds transaction ${flushedSlot}: a process opening alone could roll back to it`,
      );
    },
  },
  {
    id: 'store.concurrent-processes',
    title: "Imports, calls and listings in seven processes at once beside this host's calls: every process exits 0 and nothing is lost",
    category: 'store',
    abi: ['ABI-STORE-004', 'ABI-STORE-006'],
    engines: ['helix'],
    expected:
      'three imports (3, 6, 9 MiB), two calls, two listings and 12 calls of this host on one store: every exit 0, every artifact and run reported is in the store, store check clean, the lifecycle lock gone',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const home = host.home;
      const pol = cliPolicy(ctx);
      const files = [3, 6, 9].map((n) => bigFile(path.join(ctx.env.importRoot, `c${n}.bin`), n, n));
      const procs = [
        ...files.map((f) => startHelix(['artifact', 'import', f, '--home', home, '--policy', pol], { timeoutMs: 120_000 })),
        ...[1, 2].map(async (i) =>
          startHelix(
            [
              'call',
              's.echo',
              '--plugins',
              await ctx.pluginsDir(),
              '--home',
              home,
              '--policy',
              pol,
              '--compact',
              '--input',
              JSON.stringify({ proc: i }),
            ],
            { timeoutMs: 120_000 },
          ),
        ),
        startHelix(['runs', 'list', '--json', '--home', home], { timeoutMs: 120_000 }),
        startHelix(['artifact', 'list', '--json', '--home', home], { timeoutMs: 120_000 }),
      ];
      const mine = Array.from({ length: 12 }, (_, i) => ctx.call('s.echo', { mine: i }));
      const ended = await Promise.all(procs.map(async (p) => (await p).ended));
      const own = await Promise.all(mine);
      const codes = ended.map((e) => e.code);
      ctx.observe('exit codes', codes);
      expect(
        ended.every((e) => e.code === 0),
        `processes ended ${ended.map((e) => `${e.code ?? e.signal} ${firstLine(e.stderr)}`).join(' | ')}`,
      );
      for (const r of own) expectSuccess(r);
      for (const [i, e] of ended.slice(0, 3).entries()) {
        const rec = JSON.parse(e.stdout) as { id: string; sha256: string };
        const stored = host.artifacts.get(rec.id);
        expect(
          stored.sha256 === rec.sha256 && rec.sha256 === sha256File(files[i]!),
          `import ${i} reported ${rec.id} but the store holds ${JSON.stringify(stored)}`,
        );
      }
      for (const e of ended.slice(3, 5)) {
        const runId = (JSON.parse(e.stdout.trim()) as { run_id: string }).run_id;
        expect(host.runs.get(runId)?.status === 'succeeded', `the run ${runId} a CLI call reported is not stored succeeded`);
      }
      for (const r of own) expect(host.runs.get(r.run_id!)?.status === 'succeeded', `this host's run ${r.run_id} is not stored`);
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check after the concurrent processes: ${problemLines(report).join('; ')}`);
      expect(!existsSync(path.join(home, LIFECYCLE_LOCK)), 'the lifecycle lock was left behind');
    },
  },
  {
    id: 'store.stale-lock-region',
    title: "A hostile process rewriting LMDB's lock region to an older commit before each call cannot make a write start from it",
    category: 'store',
    abi: ['ABI-STORE-007', 'ABI-STORE-005'],
    engines: ['helix'],
    expected:
      'with the lock region set to newest-1 before each of 6 calls: every call succeeds, no earlier run or event is lost, each run has exactly [started, finished], the lock region names the newest commit after each write, store check clean',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const file = host.storePath;
      const lock = `${file}-lock`;
      // Another process reads and rewrites the lock region: a descriptor of the lock file opened
      // and closed in this process would drop the host's own POSIX locks on it (ABI-STORE-007).
      const script = `const fs = require('fs'); const [file, lock, mode] = process.argv.slice(1);
const fd = fs.openSync(file, 'r'); const b = Buffer.alloc(8); fs.readSync(fd, b, 0, 4, 24 + 24); const ps = b.readUInt32LE(0);
let newest = 0n; for (const p of [0, 1]) { fs.readSync(fd, b, 0, 8, p * ps + 24 + 128); const t = b.readBigUInt64LE(0); if (t > newest) newest = t; }
const l = fs.openSync(lock, 'r+'); const w = Buffer.alloc(8);
if (mode === 'stale') { w.writeBigUInt64LE(newest - 1n); fs.writeSync(l, w, 0, 8, ${LOCK_TXNID_AT}); }
fs.readSync(l, w, 0, 8, ${LOCK_TXNID_AT}); console.log(String(newest) + ' ' + String(w.readBigUInt64LE(0)));`;
      const other = async (mode: 'stale' | 'read'): Promise<{ newest: bigint; region: bigint }> => {
        const c = spawn(process.execPath, ['-e', script, file, lock, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        await new Promise((r) => c.once('exit', r));
        const [n, r] = out.trim().split(' ');
        return { newest: BigInt(n ?? '0'), region: BigInt(r ?? '0') };
      };
      const runs: string[] = [];
      const seen: Array<{ newest: number; region_before_call: string; region_after: string }> = [];
      expectSuccess(await ctx.call('s.echo', { warm: true }));
      for (let i = 0; i < 6; i++) {
        const set = await other('stale');
        expect(
          set.region === set.newest - 1n,
          `the hostile process did not set the lock region (it reads ${set.region}, newest ${set.newest})`,
        );
        const r = await ctx.call('s.script', { calls: [call('kv.put', { key: `k${i}`, value: i })], round: i });
        expectSuccess(r);
        runs.push(r.run_id!);
        const after = await other('read');
        seen.push({ newest: Number(set.newest), region_before_call: String(set.region), region_after: String(after.region) });
        expect(
          after.newest > set.newest && after.region === after.newest,
          `after the write the lock region names ${after.region}, the newest commit is ${after.newest} (before the call ${set.newest})`,
        );
      }
      ctx.observe('rounds', seen);
      for (const id of runs) {
        const kinds = runEvents(hostStore(host), id)
          .map((e) => e.kind)
          .join(',');
        expect(
          host.runs.get(id)?.status === 'succeeded' && kinds === 'started,finished',
          `run ${id} is ${host.runs.get(id)?.status} with events ${kinds}`,
        );
      }
      for (let i = 0; i < 6; i++) {
        const got = await ctx.call('s.script', { calls: [call('kv.get', { key: `k${i}` })] });
        expect(
          JSON.stringify(expectSuccess(got)).includes(`"value":${i}`),
          `kv k${i} written under a stale lock region is lost: ${JSON.stringify(got.output).slice(0, 200)}`,
        );
      }
      const { exit, report } = await storeCheck(host.home);
      expect(exit.code === 0, `store check: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.lifecycle-lock',
    title:
      "A lifecycle lock held by a live process makes an opener wait and say whom it waits for; a dead owner's or an old empty lock is taken over",
    category: 'store',
    abi: ['ABI-STORE-006'],
    engines: ['helix'],
    expected:
      'runs list waits past 1 s, prints "helix: waiting for process N to finish opening or closing the store in HOME", and exits 0 once the lock goes; a lock of a dead pid and an empty lock 10 s old are taken over at once (no waiting line)',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'locked');
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      const lock = path.join(home, LIFECYCLE_LOCK);
      const owner = sleeper(ctx);
      writeFileSync(lock, JSON.stringify({ pid: owner.pid, hostname: hostname(), started_at: owner.started_at }));
      const waiter = startHelix(['runs', 'list', '--json', '--home', home], { timeoutMs: 60_000 });
      const t0 = Date.now();
      await until('the waiting line', () => waiter.stderr().includes('helix: waiting for process'), 10_000, 20);
      const waitedMs = Date.now() - t0;
      expect(
        waiter.stderr() === `helix: waiting for process ${owner.pid} to finish opening or closing the store in ${home}\n`,
        `the waiting line is ${JSON.stringify(waiter.stderr())}`,
      );
      expect(waitedMs >= 800, `the waiting line came after ${waitedMs} ms, before 1 s`);
      rmSync(lock);
      const done = await waiter.ended;
      expect(done.code === 0, `the waiter exited ${done.code} once the lock went: ${done.stderr}`);
      ctx.observe('live owner', { waited_ms_before_notice: waitedMs, total_ms: done.ms, stderr: done.stderr.trim() });
      writeFileSync(lock, JSON.stringify({ pid: await deadPid(), hostname: hostname(), started_at: Date.now() - 60_000 }));
      const dead = await helix(['runs', 'list', '--json', '--home', home]);
      expect(
        dead.code === 0 && dead.stderr === '' && dead.ms < 5_000,
        `a dead owner's lock: exit ${dead.code} in ${dead.ms} ms, stderr ${dead.stderr}`,
      );
      writeFileSync(lock, '');
      const old = (Date.now() - 10_000) / 1000;
      utimesSync(lock, old, old);
      const empty = await helix(['runs', 'list', '--json', '--home', home]);
      expect(empty.code === 0 && empty.stderr === '', `an old empty lock: exit ${empty.code}, stderr ${empty.stderr}`);
      expect(!existsSync(lock), 'the lock file was left behind');
      ctx.observe('taken over', { dead_owner_ms: dead.ms, old_empty_ms: empty.ms });
      ctx.note(
        'The 30 s give-up (P-PRECOND-STORE-BUSY) is not waited for here; host/3-store/lifecycle-lock.test.ts covers it with a shorter wait.',
      );
    },
  },

  // ---------------------------------------------------------------- gc (ABI-STORE-050..057)
  {
    id: 'store.gc-pending-writes',
    title:
      "An import SIGKILLed halfway leaves a pending write of a dead process; gc reclaims exactly its chunks and unreferenced blobs, keeps another host's write, and never touches records",
    category: 'store',
    abi: ['ABI-STORE-050', 'ABI-STORE-051', 'ABI-STORE-052'],
    engines: ['helix'],
    expected:
      "store check exits 0 noting the dead pending write; gc --dry-run reports what gc then removes; gc removes the dead write, its unmarked chunks and an unreferenced blob, keeps the chunk another host's pending write marks; counts of runs, artifacts, events, journal, audit, kv, modules, params, policies, idempotency unchanged",
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const data = bigFile(path.join(ctx.env.importRoot, 'killed.bin'), 96);
      const killed = await killedImport(ctx, s.home, data, fileSize(storeFile(s.home)) + 12 * MIB);
      ctx.observe('killed import at store size', killed.fileBytes);
      const dead = await withStore(s.home, (store) => {
        const ids = [...raw(store, 'pending').getKeys()] as Array<[string, string]>;
        const marks = ids.filter((k) => k[1] !== PENDING_HEADER).map((k) => k[1]);
        return { writes: new Set(ids.map((k) => k[0])).size, marks };
      });
      expect(
        dead.writes === 1 && dead.marks.length >= 2,
        `the killed import left ${dead.writes} pending writes marking ${dead.marks.length} chunks`,
      );
      const noted = await helix(['store', 'check', '--home', s.home]);
      expect(
        noted.code === 0 && /note: 1 pending write of a process that died/.test(noted.stdout),
        `store check on the orphans: exit ${noted.code}: ${noted.stdout.slice(-300)}`,
      );
      // Another host's pending write marking one orphan chunk, and a blob nothing names.
      const held = dead.marks[0]!;
      const orphanBlob = sha256(randomBytes(8));
      await withStore(s.home, async (store) => {
        await raw(store, 'pending').put(['feedface', PENDING_HEADER], {
          owner: { pid: 1, hostname: 'another-host.example', started_at: 1 },
          created_at: Date.now(),
        });
        await raw(store, 'pending').put(['feedface', held], true);
        await raw(store, 'blobs').put(orphanBlob, { size: 1, chunks: [held] });
      });
      const before = (await storeCheck(s.home)).report;
      const dry = await helix(['gc', '--dry-run', '--json', '--home', s.home]);
      const gcRun = await helix(['gc', '--json', '--home', s.home]);
      expect(dry.code === 0 && gcRun.code === 0, `gc exited ${dry.code} (dry) and ${gcRun.code}: ${dry.stderr}${gcRun.stderr}`);
      const d = JSON.parse(dry.stdout) as GcReport;
      const g = JSON.parse(gcRun.stdout) as GcReport;
      ctx.observe('gc', { removed: g.removed, kept: g.kept });
      expect(
        JSON.stringify(d.removed) === JSON.stringify(g.removed),
        `--dry-run said ${JSON.stringify(d.removed)}, gc removed ${JSON.stringify(g.removed)}`,
      );
      expect(
        g.removed.pending_writes === 1 &&
          g.removed.blobs === 1 &&
          g.removed.chunks === dead.marks.length - 1 &&
          g.kept.live_pending_writes === 1,
        `gc removed ${JSON.stringify(g.removed)} kept ${JSON.stringify(g.kept)}; expected the dead write, 1 blob, ${dead.marks.length - 1} chunks, another host's write kept`,
      );
      const after = await storeCheck(s.home);
      expect(after.exit.code === 0, `store check after gc: ${problemLines(after.report).join('; ')}`);
      for (const db of NEVER_COLLECTED)
        expect(before.checked[db] === after.report.checked[db], `gc changed ${db}: ${before.checked[db]} -> ${after.report.checked[db]}`);
      expect(after.report.checked.chunks === before.checked.chunks! - g.removed.chunks, 'the chunk count does not match what gc reported');
      const stillHeld = await withStore(s.home, (store) => raw(store, 'chunks').doesExist(held));
      expect(stillHeld, "gc removed the chunk another host's pending write marks");
      const again = JSON.parse((await helix(['gc', '--json', '--home', s.home])).stdout) as GcReport;
      expect(
        again.removed.chunks === 0 && again.removed.blobs === 0 && again.removed.pending_writes === 0,
        `a second gc still removed ${JSON.stringify(again.removed)}`,
      );
    },
  },
  {
    id: 'store.gc-beside-writers',
    title:
      'gc looping in another process and in this host while an import deduplicates against orphans and calls are served never loses a chunk',
    category: 'store',
    abi: ['ABI-STORE-053', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      "the import (whose first chunks are orphans of a killed import) exits 0 with the file's sha256; gc ran beside its live pending write; every call during gc succeeds; export reads back the same bytes; store check clean",
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const home = host.home;
      const data = bigFile(path.join(ctx.env.importRoot, 'shared.bin'), 96, 7);
      await killedImport(ctx, home, data, fileSize(storeFile(home)) + 16 * MIB);
      const imp = startHelix(['artifact', 'import', data, '--home', home, '--policy', cliPolicy(ctx)], { timeoutMs: 120_000 });
      let cliGc = 0;
      let inProcess = 0;
      let besideLive = 0;
      let calls = 0;
      const gcLoop = (async () => {
        while (imp.child.exitCode === null) {
          const r = await helix(['gc', '--json', '--home', home]);
          expect(r.code === 0, `helix gc beside the import failed: ${firstLine(r.stderr)}`);
          cliGc++;
          if ((JSON.parse(r.stdout) as GcReport).kept.live_pending_writes > 0) besideLive++;
        }
      })();
      while (imp.child.exitCode === null) {
        const report = await collectGarbage(hostStore(host));
        inProcess++;
        if (report.kept.live_pending_writes > 0) besideLive++;
        expectSuccess(await ctx.call('s.echo', { during_gc: calls++ }));
        await new Promise((r) => setTimeout(r, 5));
      }
      const ended = await imp.ended;
      await gcLoop;
      ctx.observe('beside the import', {
        cli_gc_runs: cliGc,
        in_process_gc_runs: inProcess,
        beside_live_pending_write: besideLive,
        calls_served: calls,
      });
      expect(ended.code === 0, `the import beside gc failed: ${firstLine(ended.stderr)}`);
      expect(besideLive > 0, 'gc never ran beside the live pending write; the import was too quick to test');
      const rec = JSON.parse(ended.stdout) as { id: string; sha256: string };
      expect(rec.sha256 === sha256File(data), 'the import reported another sha256 than the file');
      const out = path.join(ctx.env.dir, 'export', 'shared.out');
      const exported = await helix(['artifact', 'export', rec.id, out, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(exported.code === 0 && sha256File(out) === rec.sha256, `export after gc: exit ${exported.code} ${firstLine(exported.stderr)}`);
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.gc-refuses-damage',
    title:
      'gc removes nothing when a record that may name a blob cannot be read or a chunk key is no digest; a damaged pending header is kept',
    category: 'store',
    abi: ['ABI-STORE-054'],
    engines: ['helix'],
    expected:
      'an undecodable artifact record: helix gc exits 1 with D-DATA-RECORD-INVALID naming artifacts and the key, an orphan chunk survives; a chunk key "not-a-digest": the same naming chunks; an undecodable pending header: gc succeeds, keeps it and its chunk, store check reports it',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const orphan = randomBytes(1000);
      const orphanKey = sha256(orphan);
      const saved = await withStore(s.home, async (store) => {
        await raw(store, 'chunks').put(orphanKey, orphan);
        return [await plant(store, 'artifacts', s.small.id, UNDECODABLE)];
      });
      const refused = await helix(['gc', '--home', s.home]);
      expectCleanError(refused, 'D-DATA-RECORD-INVALID', 1, 'gc over an undecodable artifact');
      expect(
        refused.stderr.includes(s.small.id) && /artifacts/.test(refused.stderr),
        `the refusal does not name the database and key: ${firstLine(refused.stderr)}`,
      );
      const inProc = await withStore(s.home, (store) =>
        collectGarbage(store).then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      expect(
        isHelixError(inProc) &&
          inProc.code === 'D-DATA-RECORD-INVALID' &&
          inProc.details.database === 'artifacts' &&
          inProc.details.key === s.small.id,
        `collectGarbage threw ${JSON.stringify(inProc)}`,
      );
      ctx.observe('damaged artifact', firstLine(refused.stderr));
      const kept = await withStore(s.home, async (store) => {
        const there = raw(store, 'chunks').doesExist(orphanKey);
        await restore(store, saved);
        await raw(store, 'chunks').put('not-a-digest', Buffer.from('x'));
        return there;
      });
      expect(kept, 'the refused gc removed the orphan chunk');
      const badKey = await helix(['gc', '--home', s.home]);
      expectCleanError(badKey, 'D-DATA-RECORD-INVALID', 1, 'gc over a chunk key that is no digest');
      expect(
        /chunks/.test(firstLine(badKey.stderr)) && badKey.stderr.includes('not-a-digest'),
        `the refusal does not name the chunk: ${firstLine(badKey.stderr)}`,
      );
      ctx.observe('chunk key no digest', firstLine(badKey.stderr));
      await withStore(s.home, async (store) => {
        expect(raw(store, 'chunks').doesExist(orphanKey), 'the refused gc removed the orphan chunk');
        await raw(store, 'chunks').remove('not-a-digest');
        await plant(store, 'pending', ['0badc0de', PENDING_HEADER], UNDECODABLE);
        await raw(store, 'pending').put(['0badc0de', orphanKey], true);
      });
      const gcRun = await helix(['gc', '--json', '--home', s.home]);
      expect(gcRun.code === 0, `gc with a damaged pending header failed: ${firstLine(gcRun.stderr)}`);
      const g = JSON.parse(gcRun.stdout) as GcReport;
      expect(g.kept.live_pending_writes >= 1, `gc did not keep the damaged pending write: ${JSON.stringify(g)}`);
      const still = await withStore(
        s.home,
        (store) => raw(store, 'chunks').doesExist(orphanKey) && raw(store, 'pending').doesExist(['0badc0de', PENDING_HEADER]),
      );
      expect(still, 'gc removed the damaged pending write or the chunk it marks');
      const { report } = await storeCheck(s.home);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'pending_writes', keyText(['0badc0de', PENDING_HEADER]));
    },
  },
  {
    id: 'store.gc-space-and-compact',
    title: 'gc frees pages without shrinking the file, later writes reuse them, and --compact is refused while any process holds the store',
    category: 'store',
    abi: ['ABI-STORE-055', 'ABI-STORE-056'],
    engines: ['helix'],
    expected:
      'after a killed import gc keeps the file size (within 1 MiB) and raises free bytes by at least what it removed; a 16 MiB import then grows the file by under 8 MiB; gc --compact with a helix call holding the store: P-PRECOND-STORE-BUSY naming its pid, exit 1, file unchanged; alone: the file shrinks and store check is clean',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'gc');
      const data = bigFile(path.join(ctx.env.importRoot, 'killed.bin'), 96, 3);
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      await killedImport(ctx, home, data, 24 * MIB);
      const g = JSON.parse((await helix(['gc', '--json', '--home', home])).stdout) as GcReport;
      const freed = g.space_after.free_bytes - g.space_before.free_bytes;
      ctx.observe('gc', {
        removed_bytes: g.removed.chunk_bytes,
        freed,
        file_before: g.space_before.file_bytes,
        file_after: g.space_after.file_bytes,
      });
      expect(g.removed.chunks >= 8, `gc removed only ${g.removed.chunks} chunks of the killed import`);
      expect(
        Math.abs(g.space_after.file_bytes - g.space_before.file_bytes) < MIB,
        `gc changed the file size ${g.space_before.file_bytes} -> ${g.space_after.file_bytes}`,
      );
      expect(freed >= g.removed.chunk_bytes, `gc freed ${freed} bytes but removed ${g.removed.chunk_bytes}`);
      const next = bigFile(path.join(ctx.env.importRoot, 'next.bin'), 16, 4);
      const imported = await helix(['artifact', 'import', next, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(imported.code === 0, `the import after gc failed: ${firstLine(imported.stderr)}`);
      const grown = fileSize(storeFile(home)) - g.space_after.file_bytes;
      ctx.observe('growth of a 16 MiB import after gc', grown);
      expect(grown < 8 * MIB, `a 16 MiB import after gc grew the file by ${grown} bytes: the freed pages were not reused`);
      const holder = await foreverRun(ctx, home);
      const size = fileSize(storeFile(home));
      const refused = await helix(['gc', '--compact', '--json', '--home', home]);
      expect(
        refused.code === 1 &&
          refused.stderr.startsWith('helix: P-PRECOND-STORE-BUSY: ') &&
          refused.stderr.includes(`process ${holder.proc.pid}`),
        `gc --compact beside a holder: exit ${refused.code}: ${firstLine(refused.stderr)}`,
      );
      expect(
        fileSize(storeFile(home)) === size && !existsSync(path.join(home, COMPACTING_MARKER)),
        'the refused compaction changed the file or left its marker',
      );
      ctx.observe('compaction refused', firstLine(refused.stderr));
      await kill9(holder.proc.child);
      const alone = await helix(['gc', '--compact', '--json', '--home', home]);
      expect(alone.code === 0, `gc --compact alone failed: ${firstLine(alone.stderr)}`);
      const c = (JSON.parse(alone.stdout) as { compaction: { file_bytes_before: number; file_bytes_after: number } }).compaction;
      ctx.observe('compaction', c);
      expect(c.file_bytes_after < c.file_bytes_before, `compaction did not shrink the file: ${JSON.stringify(c)}`);
      const { exit, report } = await storeCheck(home);
      expect(
        exit.code === 0 && report.checked.artifacts === 1,
        `store check after compaction: ${problemLines(report).join('; ')} (${report.checked.artifacts} artifacts)`,
      );
    },
  },
  {
    id: 'store.compaction-marker',
    title: "A compaction marker held by a live process keeps every opener out; a dead owner's marker is ignored",
    category: 'store',
    abi: ['ABI-STORE-057'],
    engines: ['helix'],
    expected:
      'runs list and call fail with P-PRECOND-STORE-BUSY "being compacted by process N", exit 1, writing nothing; with the marker\'s process dead, runs list exits 0',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'marked');
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      const owner = sleeper(ctx);
      writeFileSync(
        path.join(home, COMPACTING_MARKER),
        JSON.stringify({ pid: owner.pid, hostname: hostname(), started_at: owner.started_at }),
      );
      const before = sha256File(storeFile(home));
      for (const args of [
        ['runs', 'list', '--home', home],
        ['call', 's.echo', '--plugins', await ctx.pluginsDir(), '--home', home, '--policy', cliPolicy(ctx), '--input', '{}'],
      ]) {
        const r = await helix(args);
        expect(r.code === 1 || r.code === 3, `helix ${args[0]} beside a compaction exited ${r.code}`);
        expect(
          r.stderr.includes(`helix: P-PRECOND-STORE-BUSY: The store in ${home} is being compacted by process ${owner.pid}.`),
          `helix ${args[0]}: ${firstLine(r.stderr)}`,
        );
        ctx.observe(`helix ${args[0]}`, `exit ${r.code}: ${firstLine(r.stderr)}`);
      }
      expect(sha256File(storeFile(home)) === before, 'an opener refused by the marker wrote to the store');
      await owner.stop();
      const r = await helix(['runs', 'list', '--json', '--home', home]);
      expect(r.code === 0, `with the marker's owner dead, runs list exited ${r.code}: ${firstLine(r.stderr)}`);
    },
  },

  // ---------------------------------------------------------------- store check (ABI-STORE-060..065)
  {
    id: 'store.check-chunks-and-blobs',
    title:
      'store check re-hashes every chunk and blob: a flipped bit, a missing chunk, a reordered chunk list, a wrong size, an undecodable blob record',
    category: 'store',
    abi: ['ABI-STORE-060', 'ABI-STORE-061', 'ABI-STORE-065'],
    engines: ['helix'],
    expected:
      'D-DATA-CHECKSUM chunks <key> and blobs <sha>; D-DATA-REFERENCE blobs "chunk 2 (...) is not in chunks"; D-DATA-RECORD-INVALID blobs "chunk 0 holds N bytes, not 1048576"; D-DATA-CHECKSUM blobs for the size; D-DATA-RECORD-INVALID for the record; one line each, exit 1; clean (exit 0) once restored',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const round1 = await plantedCheck(ctx, s.home, async (store) => [
        await plant(store, 'chunks', s.big.chunks[1]!, flip(Buffer.from(raw(store, 'chunks').getBinary(s.big.chunks[1]!)!), 1000)),
        await plant(store, 'blobs', s.big2.sha256, { size: 2_400_000, chunks: [...s.big2.chunks].reverse() }),
        await plant(store, 'blobs', s.small.sha256, UNDECODABLE),
      ]);
      expectProblem(round1.report, 'D-DATA-CHECKSUM', 'chunks', s.big.chunks[1]!, /do not hash to its key/);
      expectProblem(round1.report, 'D-DATA-CHECKSUM', 'blobs', s.big.sha256);
      expectProblem(round1.report, 'D-DATA-RECORD-INVALID', 'blobs', s.big2.sha256, /chunk 0 holds \d+ bytes, not 1048576/);
      expectProblem(round1.report, 'D-DATA-RECORD-INVALID', 'blobs', s.small.sha256);
      const round2 = await plantedCheck(ctx, s.home, async (store) => [
        await plant(store, 'chunks', s.big.chunks[2]!, undefined),
        await plant(store, 'blobs', s.big2.sha256, { size: 2_400_001, chunks: s.big2.chunks }),
      ]);
      expectProblem(
        round2.report,
        'D-DATA-REFERENCE',
        'blobs',
        s.big.sha256,
        new RegExp(`chunk 2 \\(${s.big.chunks[2]}\\) is not in chunks`),
      );
      expectProblem(round2.report, 'D-DATA-CHECKSUM', 'blobs', s.big2.sha256, /its chunks hold 2400000 bytes, the record says 2400001/);
      ctx.observe('round 1', problemLines(round1.report));
      ctx.observe('round 2', problemLines(round2.report));
      ctx.observe('bytes re-hashed', round1.report.bytes_hashed);
    },
  },
  {
    id: 'store.check-records',
    title: 'store check parses every record of every database against its schema and its key, and hashes params and policies',
    category: 'store',
    abi: ['ABI-STORE-062', 'ABI-STORE-065'],
    engines: ['helix'],
    expected:
      'D-DATA-RECORD-INVALID for a cut run record, an artifact with size "large", a run event and audit record of the wrong shape, a kv key that is not [tool, key], an active run of the wrong shape, a module record carrying another digest, meta last_created_at "x", a pending header of the wrong shape; D-DATA-CHECKSUM for edited params and policy text',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      let auditKey: unknown;
      let moduleKey = '';
      const { report } = await plantedCheck(ctx, s.home, async (store) => {
        auditKey = [...raw(store, 'audit').getKeys()][0];
        moduleKey = String([...raw(store, 'modules').getKeys()][0]);
        const mod = raw(store, 'modules').get(moduleKey) as Record<string, unknown>;
        const artifact = raw(store, 'artifacts').get(s.big.id) as Record<string, unknown>;
        return [
          await plant(store, 'runs', s.echo.run_id, Buffer.from([0x92, 0x01])),
          await plant(store, 'artifacts', s.big.id, { ...artifact, size: 'large' }),
          await plant(store, 'runEvents', [s.writer.run_id, 0], { kind: 42 }),
          await plant(store, 'audit', auditKey as string, { at: 'yesterday' }),
          await plant(store, 'kv', 'plain-key', { n: 1 }),
          await plant(store, 'activeRuns', s.script.run_id, { pid: 'x' }),
          await plant(store, 'modules', moduleKey, { ...mod, digest: `sha256:${'0'.repeat(64)}` }),
          await plant(store, 'meta', 'last_created_at', 'x'),
          await plant(store, 'pending', ['cafe', PENDING_HEADER], { owner: 'me' }),
          await plant(store, 'params', s.writer.params_hash, '{"edited":true}'),
          await plant(store, 'policies', s.writer.policy_hash, '{"version":1}'),
        ];
      });
      const k = keyText;
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'runs', s.echo.run_id);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'artifacts', s.big.id, /at size/);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'run_events', k([s.writer.run_id, 0]));
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'audit', k(auditKey));
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'kv', 'plain-key');
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'active_runs', s.script.run_id);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'modules', moduleKey, /carries the digest/);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'meta', 'last_created_at');
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'pending_writes', k(['cafe', PENDING_HEADER]));
      expectProblem(report, 'D-DATA-CHECKSUM', 'param_sets', s.writer.params_hash);
      expectProblem(report, 'D-DATA-CHECKSUM', 'policies', s.writer.policy_hash);
      ctx.observe('problems', problemLines(report));
    },
  },
  {
    id: 'store.check-references',
    title:
      'store check follows every reference: artifacts to blobs and the time index, runs to params, logs and idempotency keys, events and active runs to runs, modules to their bytes',
    category: 'store',
    abi: ['ABI-STORE-063'],
    engines: ['helix'],
    expected:
      'D-DATA-REFERENCE for: an artifact whose blob is gone, an artifact missing from artifacts_by_time, a run whose params and log artifact are gone, an event and an active run of a run that does not exist, an idempotency key naming no run, a module whose bytes are gone',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const ghost = `run_${'0'.repeat(32)}`;
      let byTime: unknown;
      let moduleKey = '';
      const { report } = await plantedCheck(ctx, s.home, async (store) => {
        const a = raw(store, 'artifacts').get(s.big2.id) as { created_at: number };
        byTime = [a.created_at, s.big2.id];
        const echoModuleDigest = s.echo.module_digest!;
        moduleKey = echoModuleDigest;
        const mod = raw(store, 'modules').get(echoModuleDigest) as { blob: string };
        return [
          await plant(store, 'blobs', s.small.sha256, undefined),
          await plant(store, 'artifactsByTime', byTime as string, undefined),
          await plant(store, 'params', s.writer.params_hash, undefined),
          await plant(store, 'artifacts', s.echo.log_artifact_id!, undefined),
          await plant(store, 'runEvents', [ghost, 0], raw(store, 'runEvents').get([s.echo.run_id, 0]) as object),
          await plant(store, 'activeRuns', ghost, { pid: 1, hostname: hostname(), started_at: 1 }),
          await plant(store, 'idempotency', 'ghost-key', ghost),
          await plant(store, 'blobs', mod.blob, undefined),
        ];
      });
      const k = keyText;
      expectProblem(report, 'D-DATA-REFERENCE', 'artifacts', s.small.id, /its blob .* is not in blobs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'artifacts', s.big2.id, /missing from artifacts_by_time/);
      expectProblem(report, 'D-DATA-REFERENCE', 'runs', s.writer.run_id, /its params .* are not in param_sets/);
      expectProblem(report, 'D-DATA-REFERENCE', 'runs', s.echo.run_id, /its log .* is not in artifacts/);
      expectProblem(report, 'D-DATA-REFERENCE', 'run_events', k([ghost, 0]), /is not in runs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'active_runs', ghost, /is not in runs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'idempotency', 'ghost-key', /is not in runs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'modules', moduleKey, /its bytes, blob .* are not in blobs/);
      ctx.observe('problems', problemLines(report));
    },
  },
  {
    id: 'store.check-journal',
    title: "store check re-chains every run's journal: an edited entry and a dropped last entry break it",
    category: 'store',
    abi: ['ABI-STORE-064'],
    engines: ['helix'],
    expected:
      'D-DATA-JOURNAL run_journal <run>/1 "entry 1 does not match its hash" for an edited (still valid) entry; D-DATA-JOURNAL naming the run when its last entry is removed',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const runId = s.script.run_id;
      expect(s.script.journal.entries === 4, `the seeded run has ${s.script.journal.entries} journal entries, not 4`);
      const edited = await plantedCheck(ctx, s.home, async (store) => {
        const entry = raw(store, 'journal').get([runId, 1]) as JournalEntry;
        return [await plant(store, 'journal', [runId, 1], { ...entry, args: { key: 'edited' } })];
      });
      expectProblem(edited.report, 'D-DATA-JOURNAL', 'run_journal', `${runId}/1`, /entry 1 does not match its hash/);
      const dropped = await plantedCheck(ctx, s.home, async (store) => [await plant(store, 'journal', [runId, 3], undefined)]);
      const journalProblem = dropped.report.problems.find((p) => p.code === 'D-DATA-JOURNAL' && p.key.startsWith(runId));
      expect(
        journalProblem !== undefined,
        `a dropped last entry was not reported as D-DATA-JOURNAL of ${runId}: ${problemLines(dropped.report).join('; ')}`,
      );
      ctx.observe('edited entry', problemLines(edited.report));
      ctx.observe(
        'dropped entry',
        dropped.report.problems.map((p) => `${p.code} ${p.database} ${p.key}: ${p.message}`),
      );
    },
  },
  {
    id: 'store.check-read-only-beside-writer',
    title: 'store check writes nothing, runs beside a live import, and does not count its pending write as damage',
    category: 'store',
    abi: ['ABI-STORE-065', 'ABI-STORE-004'],
    engines: ['helix'],
    expected:
      'on an idle store, store check leaves the newest commit unchanged; every store check run wholly during a 256 MiB import in another process it exits 0 with no note of a dead pending write, and the import then succeeds',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const before = newestCommitIn(storeFile(s.home));
      const idle = await storeCheck(s.home);
      expect(
        idle.exit.code === 0 && newestCommitIn(storeFile(s.home)) === before,
        `store check on an idle store: exit ${idle.exit.code}, commits ${before} -> ${newestCommitIn(storeFile(s.home))}`,
      );
      const data = bigFile(path.join(ctx.env.importRoot, 'live.bin'), 256, 11);
      const imp = startHelix(['artifact', 'import', data, '--home', s.home, '--policy', cliPolicy(ctx)], { timeoutMs: 120_000 });
      await until(
        'the import to start writing chunks',
        () => fileSize(storeFile(s.home)) > idle.report.bytes_hashed + 8 * MIB || imp.child.exitCode !== null,
        30_000,
        5,
      );
      // Each store check must begin and end while the import runs: its reading overlaps the import's writes.
      const beside: CliExit[] = [];
      while (imp.child.exitCode === null) {
        const r = await helix(['store', 'check', '--home', s.home]);
        if (imp.child.exitCode === null) beside.push(r);
      }
      const ended = await imp.ended;
      ctx.observe(
        'store checks run wholly beside the import',
        beside.map((r) => ({ exit: r.code, summary: r.stdout.trim().split('\n').pop() })),
      );
      expect(beside.length > 0, 'the import ended before one store check could run beside it');
      for (const r of beside)
        expect(
          r.code === 0 && !/pending write/.test(r.stdout),
          `store check beside a live import: exit ${r.code}: ${r.stdout.slice(-300)}`,
        );
      expect(ended.code === 0, `the import beside store check failed: ${firstLine(ended.stderr)}`);
    },
  },

  // ---------------------------------------------------------------- verify (ABI-STORE-031..033)
  {
    id: 'store.verify-tampered-outputs',
    title: 'helix verify finds damaged output bytes, an output record moved to other bytes, and an edited stored output value',
    category: 'store',
    abi: ['ABI-STORE-031', 'ABI-STORE-032', 'ABI-STORE-033'],
    engines: ['helix'],
    expected:
      'exit 1 and match false with first_difference.where "output report (<artifact>)" and check "stored outputs read back as recorded" false; then "output report" with "same output artifacts" false; then "output value" with "same output value" false; exit 0 when untouched',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const verify = async (runId: string): Promise<{ code: number | null; report: VerifyReport }> => {
        const r = await helix(['verify', runId, '--home', s.home]);
        try {
          return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
        } catch {
          throw new CheckFailure(`helix verify printed no report (exit ${r.code}): ${firstLine(r.stderr)}`);
        }
      };
      const clean = await verify(s.writer.run_id);
      expect(
        clean.code === 0 && clean.report.match,
        `verify of the untouched run: exit ${clean.code} ${JSON.stringify(clean.report.first_difference)}`,
      );
      const output = s.writer.outputs[0]!;
      const check = (r: VerifyReport, name: string): boolean | undefined => r.checks.find((c) => c.check === name)?.ok;

      const chunk = await withStore(s.home, async (store) => {
        const rec = raw(store, 'blobs').get(output.sha256) as { chunks: string[] };
        return [await plant(store, 'chunks', rec.chunks[0]!, flip(Buffer.from(raw(store, 'chunks').getBinary(rec.chunks[0]!)!), 0))];
      });
      const damaged = await verify(s.writer.run_id);
      const where1 = (damaged.report.first_difference as { where?: string } | undefined)?.where;
      expect(
        damaged.code === 1 &&
          !damaged.report.match &&
          where1 === `output report (${output.artifact_id})` &&
          check(damaged.report, 'stored outputs read back as recorded') === false,
        `damaged output bytes: exit ${damaged.code} ${JSON.stringify(damaged.report.first_difference)}`,
      );
      await withStore(s.home, (store) => restore(store, chunk));
      ctx.observe('damaged bytes', damaged.report.first_difference);

      const moved = await withStore(s.home, async (store) => {
        const other = await (await import('../../host/4-calls/artifacts/index.js')).importInline(store, 'line 1\nline X\n');
        const rec = raw(store, 'artifacts').get(output.artifact_id) as Record<string, unknown>;
        const run = raw(store, 'runs').get(s.writer.run_id) as RunRecord;
        return [
          await plant(store, 'artifacts', output.artifact_id, { ...rec, sha256: other.sha256, size: other.size }),
          await plant(store, 'runs', s.writer.run_id, { ...run, outputs: [{ ...output, sha256: other.sha256 }] }),
        ];
      });
      const other = await verify(s.writer.run_id);
      const where2 = (other.report.first_difference as { where?: string } | undefined)?.where;
      expect(
        other.code === 1 &&
          where2 === 'output report' &&
          check(other.report, 'same output artifacts') === false &&
          check(other.report, 'stored outputs read back as recorded') === true,
        `output moved to other bytes: exit ${other.code} ${JSON.stringify(other.report.first_difference)} checks ${JSON.stringify(other.report.checks)}`,
      );
      await withStore(s.home, (store) => restore(store, moved));
      ctx.observe('moved output', other.report.first_difference);

      await withStore(s.home, async (store) => {
        const run = raw(store, 'runs').get(s.echo.run_id) as RunRecord;
        await plant(store, 'runs', s.echo.run_id, { ...run, result: { ...run.result!, output: { n: 2 } } });
      });
      const value = await verify(s.echo.run_id);
      const where3 = (value.report.first_difference as { where?: string } | undefined)?.where;
      expect(
        value.code === 1 && where3 === 'output value' && check(value.report, 'same output value') === false,
        `edited output value: exit ${value.code} ${JSON.stringify(value.report.first_difference)} checks ${JSON.stringify(value.report.checks)}`,
      );
      ctx.observe('edited value', value.report.first_difference);
    },
  },

  // ---------------------------------------------------------------- chunk batches (ABI-STORE-036)
  {
    id: 'store.chunk-batches',
    title: 'An import commits its chunks 8 MiB to a commit, and a stalling source has its first chunk stored and held within 20 ms',
    category: 'store',
    abi: ['ABI-STORE-036', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      'a 32 MiB import through the CLI costs well under one commit per 1 MiB chunk (under 16 of 32; 4 batches and the record on a fast disk); a writer whose source yields 1 MiB then stalls has, 100 ms later, that chunk and a pending write naming this process visible to another process (store check)',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'batches');
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      const before = newestCommitIn(storeFile(home));
      const data = bigFile(path.join(ctx.env.importRoot, 'b32.bin'), 32, 5);
      const imported = await helix(['artifact', 'import', data, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(imported.code === 0, `the import failed: ${firstLine(imported.stderr)}`);
      const commits = newestCommitIn(storeFile(home)) - before;
      ctx.observe('commits of a 32 MiB import', commits);
      // 8 MiB to a commit is 4 and the record; a batch the disk fills slower than 20 ms commits early.
      expect(commits < 16, `a 32 MiB import took ${commits} commits: not batched (one per 1 MiB chunk would be 32)`);

      const host = await ctx.host();
      let release: () => void = () => undefined;
      const stalled = new Promise<void>((r) => (release = r));
      async function* source(): AsyncGenerator<Uint8Array> {
        yield randomBytes(MIB);
        yield randomBytes(1000);
        await stalled;
        yield randomBytes(10);
      }
      const chunksBefore = (await storeCheck(host.home)).report.checked.chunks ?? 0;
      const writing = writeChunks(hostStore(host), source());
      ctx.defer(() => release());
      await new Promise((r) => setTimeout(r, 100));
      const { report } = await storeCheck(host.home);
      ctx.observe('100 ms into a stalled write', {
        chunks: report.checked.chunks,
        chunks_before: chunksBefore,
        pending_writes: report.checked.pending_writes,
      });
      expect(
        (report.checked.chunks ?? 0) >= chunksBefore + 1 && (report.checked.pending_writes ?? 0) >= 2,
        `100 ms after the source stalled, another process sees ${report.checked.chunks} chunks (before ${chunksBefore}) and ${report.checked.pending_writes} pending-write entries`,
      );
      release();
      const blob = await writing;
      await hostStore(host).transaction(() => discardBlob(hostStore(host), blob));
    },
  },
];
