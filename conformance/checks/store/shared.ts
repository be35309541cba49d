// What the store checks share: the toolpacks and policy every store check loads, a store seeded by
// a real host in a home of the check's own, store check runs over damage planted and restored, and
// small helpers of evidence (hashes, a flipped byte).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunRecord } from '../../../abi/index.js';
import { createHost } from '../../../host/5-host/host.js';
import type { CheckReport, Planted, StoreDiagnostics } from '../../../host/5-host/store-upkeep.js';
import { loadPolicy } from '../../../host/5-host/toolpacks.js';
import { expect, type CheckContext, type PackSpec } from '../../check.js';
import { echoModule, numberResultModule } from '../../kit/guest-wat.js';
import { helix, problemLines, storeCheck, withDiagnostics, writeCheckPolicy, type CliExit } from '../../kit/store-kit.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';

/** Bytes in a MiB. */
export const MIB = 1 << 20;
/** The script guest's limits in the store checks. */
export const SCRIPT_LIMITS = {
  ...DEFAULT_LIMITS,
  maxInputBytes: 100_000,
  maxOutputBytes: 100_000,
  fuel: 5e9,
  maxMemoryPages: 256,
  maxCapabilityCalls: 100,
};

/** The toolpacks every store check loads: an echo, a guest that never ends, the script guest (capabilities and outputs), a slow loop. */
export const PACKS: readonly PackSpec[] = [
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

/** The toolpacks of every store check. */
export const packs = (): readonly PackSpec[] => PACKS;
/** The check's default policy, but s.denied is not allowed (a blocked run leaves an audit record). */
export const policy = (_e: unknown, env: { dir: string; importRoot: string }): Record<string, unknown> => ({
  version: 1,
  tools: { allow: ['s.echo', 's.forever', 's.script', 's.writer', 's.stall', 's.slow', 'conformance.canary', 'helix.*'] },
  grants: { '*': ['clock.*', 'log.*', 'kv.*', 'artifact.*'] },
  ceilings: { maxImportBytes: 1_000_000_000 },
  paths: { importRoots: [env.importRoot], exportRoots: [path.join(env.dir, 'export')] },
});

/** A capability call the script guest makes. */
export const call = (name: string, args: Record<string, unknown>) => ({ name, args });

/** The policy file the check's CLI processes use (the check's own policy, written out). */
export function cliPolicy(ctx: CheckContext): string {
  return writeCheckPolicy(ctx, policy(undefined, ctx.env));
}

/** What a seeded store holds. */
export interface Seeded {
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
export async function seed(ctx: CheckContext, home: string): Promise<Seeded> {
  const host = await createHost({
    toolpacksDir: await ctx.toolpacksDir(),
    policy: loadPolicy(cliPolicy(ctx)),
    home,
    warn: () => undefined,
  });
  try {
    const chunksOf = (sha: string): string[] => [...host.diagnostics.chunksOf(sha)!];
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
    const runOf = (id: string | null): RunRecord => host.runs.get(id!)!;
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

/** sha256 hex of bytes or text, and of a file. */
export const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
export const sha256File = (file: string): string => sha256(readFileSync(file));

/** Store check counts of every database gc must never touch. */
export const NEVER_COLLECTED = [
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
export async function plantedCheck(
  ctx: CheckContext,
  home: string,
  damage: (store: StoreDiagnostics) => Promise<Planted[]>,
): Promise<{ text: CliExit; report: CheckReport }> {
  const saved = await withDiagnostics(home, damage);
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
  await withDiagnostics(home, (store) => store.restore(saved));
  const clean = await storeCheck(home);
  expect(
    clean.exit.code === 0 && clean.report.ok,
    `after the damage was restored, store check still finds: ${problemLines(clean.report).join('; ')}`,
  );
  ctx.note(`store check lines:\n${text.stdout.trim()}`);
  return { text, report };
}

/** Fails unless `report` lists a problem with this code, database and key (and message). */
export function expectProblem(report: CheckReport, code: string, database: string, key: string, message?: RegExp): void {
  const found = report.problems.find((p) => p.code === code && p.database === database && p.key === key);
  expect(found !== undefined, `store check did not report ${code} ${database} ${key}; it reported: ${problemLines(report).join('; ')}`);
  if (message !== undefined)
    expect(message.test(found.message), `${code} ${database} ${key}: message "${found.message}" does not match ${message}`);
}

/** A copy of `bytes` with the lowest bit of the byte at `at` flipped. */
export const flip = (bytes: Buffer, at: number): Buffer => {
  const b = Buffer.from(bytes);
  b[at] = b[at]! ^ 0x01;
  return b;
};
