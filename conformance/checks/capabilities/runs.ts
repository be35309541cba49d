// Capability checks of what a run's calls leave (ABI-CAP-007..009): every call journaled in a hash
// chain verify replays and a forger cannot re-chain, outputs written only to declared roles and
// sealed or not at all, and no call from a start function.
import { brokenLink, entryHash, JOURNAL_GENESIS } from '../../../host/5-host/inspection.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { numberResultModule, watString } from '../../kit/guest-wat.js';
import { answersOf, call, script, stored } from './shared.js';

/** The checks of this file, in the report's order. */
export const runChecks: readonly Check[] = [
  {
    id: 'capabilities.journal-chain-verify',
    title: 'Every call is journaled in a hash chain; verify replays the run, and catches a tampered or re-chained entry',
    category: 'capabilities',
    abi: ['ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'the journal lists every call (served, refused and invalid) in order with an unbroken chain ending at the run record\'s head; verifyRun matches even after the kv value changes; an edited result fails the chain check, and an edit whose chain and head were recomputed fails as "does not hash to what the guest received"',
    packs: () => [
      script('cap.journal', {
        capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'kv.put', 'kv.get', 'artifact.read', 'log.emit'] },
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const art = await stored(ctx, new TextEncoder().encode(`>r1\n${'ACGT'.repeat(500)}\n`), 'fasta');
      const r = await ctx.call('cap.journal', {
        calls: [
          call('clock.now_unix'),
          call('kv.put', { key: 'v', value: 1 }),
          call('kv.get', { key: 'v' }),
          call('artifact.read', { artifact_id: art, length: 100 }),
          call('log.emit', { event: 'done' }),
          call('nope.nope'),
          call('kv.put', { key: '' }),
        ],
      });
      expectSuccess(r);
      const journal = host.runs.journal(r.run_id!);
      const names = journal.map((e) => `${e.name}:${e.outcome}`);
      expect(
        JSON.stringify(names) ===
          JSON.stringify([
            'clock.now_unix:ok',
            'kv.put:ok',
            'kv.get:ok',
            'artifact.read:ok',
            'log.emit:ok',
            'nope.nope:error',
            'kv.put:error',
          ]),
        `journal: ${JSON.stringify(names)}`,
      );
      const run = host.runs.get(r.run_id!)!;
      expect(run.journal.entries === 7 && run.journal.head === journal[6]!.hash, `the run record names ${JSON.stringify(run.journal)}`);
      expect(brokenLink(journal, run.journal.head) === undefined, 'the chain is broken as written');
      expect(
        journal[3]!.mode === 'digest' && journal[3]!.result === null && typeof journal[3]!.result_sha256 === 'string',
        'artifact.read is not journaled by digest',
      );
      await ctx.call('cap.journal', { calls: [call('kv.put', { key: 'v', value: 2 })] });
      const clean = await host.runs.verify(r.run_id!);
      expect(clean.match === true, `verify of the untouched run: ${JSON.stringify(clean).slice(0, 500)}`);
      // Tamper: the clock's answer.
      const edited = { ...journal[0]!, result: { unix_ms: 1, unix_s: 0 } };
      await host.diagnostics.plant('journal', [r.run_id!, 0], edited);
      const plain = await host.runs.verify(r.run_id!);
      expect(
        plain.match === false && plain.checks.some((c) => c.check === 'journal hash chain' && !c.ok),
        `an edited entry passed: ${JSON.stringify(plain).slice(0, 500)}`,
      );
      // A forger recomputes every hash from the edit on, and the run's head.
      let prev = JOURNAL_GENESIS;
      const chained = journal.map((e, i) => {
        const { hash: _h, ...body } = i === 0 ? edited : e;
        const hash = entryHash(prev, body as never);
        prev = hash;
        return { ...body, hash };
      });
      for (const [i, e] of chained.entries()) await host.diagnostics.plant('journal', [r.run_id!, i], e);
      await host.diagnostics.plant('runs', r.run_id!, { ...run, journal: { entries: 7, head: chained[6]!.hash } });
      const forged = await host.runs.verify(r.run_id!);
      expect(forged.match === false, `a re-chained forgery passed verify: ${JSON.stringify(forged).slice(0, 500)}`);
      ctx.observe('forged_difference', forged.first_difference);
      ctx.observe(
        'chain_check',
        plain.checks.find((c) => c.check === 'journal hash chain'),
      );
    },
  },
  {
    id: 'capabilities.declared-outputs',
    title:
      'artifact.write only reaches declared roles; a run that does not seal exactly its declared outputs fails, and its pieces never become visible',
    category: 'capabilities',
    abi: ['ABI-CAP-008', 'ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'writes to an undeclared role and to the reserved role "log" are refused (C-CONTRACT-OUTPUT-ROLE); artifact.list inside the run, after the output was sealed, does not show it; the run succeeds with one output linked to it; the journal keeps each piece as data_length only; a run writing nothing, one never sealing, and one with the wrong type fail C-CONTRACT-DECLARED-OUTPUTS naming the problem, and leave no artifact behind',
    packs: () => [
      script('cap.writer', {
        capabilities: { abiVersion: 1, allow: ['artifact.write', 'artifact.read', 'artifact.list'] },
        declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }],
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const before = host.artifacts.list().length;
      const r = await ctx.call('cap.writer', {
        calls: [
          call('artifact.write', { role: 'report', data: 'line 1\n' }),
          call('artifact.write', { role: 'extra', data: 'x', final: true }),
          call('artifact.write', { role: 'log', data: 'forged log line\n', final: true }),
          call('artifact.write', { role: 'report', data: 'line 2\n', final: true }),
          call('artifact.list', {}),
        ],
      });
      expectSuccess(r);
      const a = answersOf(r);
      const sealed = a[3]!.capability_result!.result as { artifact_id: string; bytes: number; sha256: string };
      expect(a[0]!.status === 'ok' && sealed.bytes === 14, `the declared writes were answered ${JSON.stringify([a[0], a[3]])}`);
      expect(a[1]!.error?.code === 'C-CONTRACT-OUTPUT-ROLE', `the undeclared role was answered ${JSON.stringify(a[1])}`);
      expect(a[2]!.error?.code === 'C-CONTRACT-OUTPUT-ROLE', `the reserved role log was answered ${JSON.stringify(a[2])}`);
      const listed = JSON.stringify(a[4]!.capability_result?.result ?? {});
      expect(!listed.includes(sealed.artifact_id), 'the output was visible to artifact.list inside its own run');
      const run = host.runs.get(r.run_id!)!;
      expect(
        run.outputs.length === 1 && run.outputs[0]!.artifact_id === sealed.artifact_id && run.outputs[0]!.role === 'report',
        `outputs: ${JSON.stringify(run.outputs)}`,
      );
      expect(host.artifacts.get(sealed.artifact_id).created_by_run === r.run_id, 'the output is not linked to its run');
      const journal = host.runs.journal(r.run_id!);
      expect(
        JSON.stringify(journal[0]!.args) === JSON.stringify({ role: 'report', data_length: 7 }),
        `the journal keeps ${JSON.stringify(journal[0]!.args)}`,
      );
      ctx.observe(
        'codes',
        a.map((x) => x.error?.code ?? x.status),
      );
      const failures: Array<[string, unknown[], string]> = [
        ['nothing written', [], 'role report was not created'],
        ['never sealed', [call('artifact.write', { role: 'report', data: 'half' })], 'never sealed'],
        ['wrong type', [call('artifact.write', { role: 'report', data: '{"a":1}', type: 'json', final: true })], 'has type json'],
      ];
      const after = host.artifacts.list().length;
      for (const [what, calls, problem] of failures) {
        const f = await ctx.call('cap.writer', { calls });
        expectOutcome(f, 'terminal_error', 'C-CONTRACT-DECLARED-OUTPUTS');
        expect(JSON.stringify(f.error!.details).includes(problem), `${what}: ${JSON.stringify(f.error!.details)}`);
      }
      const left = host.artifacts
        .list()
        .filter((x) => x.source?.kind === 'run' && (x.source as { role?: string }).role === 'report').length;
      expect(left === 1, `${left} report artifacts are in the store: a failed run's output became visible`);
      ctx.observe('artifacts', { before, after_success: after, after_failures: host.artifacts.list().length });
    },
  },
  {
    id: 'capabilities.start-function-call',
    title: 'A start function that calls capability_call ends the call with S-TOOL-TRAP (phase start)',
    category: 'capabilities',
    abi: ['ABI-CAP-009'],
    engines: ['helix'],
    expected: 'terminal_error S-TOOL-TRAP with details.phase "start"; the call never reaches the broker (no journal entry)',
    packs: () => [
      {
        id: 'cap.start_call',
        module: numberResultModule('(i64.const 1)', {
          imports: '(import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))',
          extra: `(data (i32.const 1024) "${watString('{"abi_version":1,"name":"clock.now_unix","args":{}}')}")
  (func $start (drop (call $cap (i32.const 1024) (i32.const 49))))
  (start $start)`,
        }),
        manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('cap.start_call', {});
      expectOutcome(r, 'terminal_error', 'S-TOOL-TRAP');
      expect(r.error!.details.phase === 'start', `phase: ${JSON.stringify(r.error!.details)}`);
      if (r.run_id !== undefined && r.run_id !== null)
        expect(host.runs.journal(r.run_id).length === 0, 'the start function reached the broker');
      ctx.observe('error', { message: r.error!.message, details: r.error!.details });
      const again = await ctx.call('cap.start_call', { n: 2 });
      expectOutcome(again, 'terminal_error', 'S-TOOL-TRAP');
    },
  },
];
