// Identity checks of what a run's record shows: every refused capability call with its reason
// (helix runs show), and a run or journal edited after the fact, which verify finds
// (ABI-RUNID-008, ABI-RUNID-009).
import { CheckFailure, expect, expectSuccess, type Check } from '../../check.js';
import { expectExit, runHelix } from '../../kit/files-kit.js';

/** The checks of this file, in the report's order. */
export const recordChecks: readonly Check[] = [
  {
    id: 'identity.refused-calls-shown',
    title: 'helix runs show lists every capability call the broker refused, in journal order, with decision, code, reason and hint',
    category: 'identity',
    abi: ['ABI-RUNID-009'],
    engines: ['helix'],
    expected:
      'a run making kv.get and log.emit (granted by the policy, not in the allowlist), dns.lookup (unknown), artifact.stat with bad arguments, clock.now_unix (answered) and artifact.stat of a missing artifact (failed) succeeds; `helix runs show` exits 0 and lists exactly the 4 refused calls in seq order (forbidden x3 A-AUTH-FORBIDDEN, invalid I-REQ-CAPABILITY-ARGS) with their reasons and hints, and prints one refused: line each on stderr',
    packs: () => [
      {
        id: 'identity.asker',
        guest: 'script.ts',
        module: '',
        manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'artifact.stat'] } },
      },
    ],
    async run(ctx) {
      const call = (name: string, args: Record<string, unknown> = {}): { name: string; args: Record<string, unknown> } => ({ name, args });
      const r = await ctx.call('identity.asker', {
        calls: [
          call('kv.get', { key: 'k' }),
          call('log.emit', { event: 'x' }),
          call('dns.lookup', { host: 'example.org' }),
          call('artifact.stat', { id: 'art_00000000000000000000000000' }),
          call('clock.now_unix'),
          call('artifact.stat', { artifact_id: 'art_00000000000000000000000000' }),
        ],
      });
      expectSuccess(r);
      const host = await ctx.host();
      const shown = await runHelix(['runs', 'show', r.run_id!, '--home', host.home], { cwd: ctx.env.dir });
      expectExit(shown, 0, 'helix runs show');
      const refused = (JSON.parse(shown.stdout) as { refused_calls: Array<Record<string, unknown>> }).refused_calls;
      ctx.observe('refused_calls', refused);
      ctx.observe('stderr', shown.stderr.trim().split('\n'));
      const want: Array<[number, string, string, string, RegExp]> = [
        [0, 'kv.get', 'forbidden', 'A-AUTH-FORBIDDEN', /^not in the manifest allowlist$/],
        [1, 'log.emit', 'forbidden', 'A-AUTH-FORBIDDEN', /^not in the manifest allowlist$/],
        [2, 'dns.lookup', 'forbidden', 'A-AUTH-FORBIDDEN', /^unknown capability$/],
        [3, 'artifact.stat', 'invalid', 'I-REQ-CAPABILITY-ARGS', /^The arguments of artifact\.stat have \d+ violations?: /],
      ];
      expect(
        refused.length === want.length,
        `expected ${want.length} refused calls, got ${refused.length}: ${JSON.stringify(refused).slice(0, 800)}`,
      );
      want.forEach(([seq, capability, decision, code, reason], i) => {
        const got = refused[i]!;
        expect(
          got.seq === seq &&
            got.capability === capability &&
            got.decision === decision &&
            got.code === code &&
            reason.test(String(got.reason)),
          `refused call ${i}: ${JSON.stringify(got)}`,
        );
        expect(typeof got.hint === 'string' && got.hint.length > 10, `refused call ${i} has no hint: ${JSON.stringify(got)}`);
      });
      const lines = shown.stderr.split('\n').filter((l) => l.startsWith('refused: '));
      expect(lines.length === 4, `helix runs show printed ${lines.length} refused: lines: ${shown.stderr.slice(0, 600)}`);
      const api = host.runs.refusedCalls(r.run_id!);
      expect(JSON.stringify(api) === JSON.stringify(refused), 'host.runs.refusedCalls differs from helix runs show');
    },
  },
  {
    id: 'identity.tampered-run-verify',
    title: 'A stored run whose output value or journal was altered is found by host.runs.verify and helix verify',
    category: 'identity',
    abi: ['ABI-STORE-033', 'ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'an untouched run verifies (match: true, exit 0); after the run record\'s output is changed, verify gives match: false at "output value" (helix verify exits 1); after a journal entry\'s result is changed, verify gives match: false with the "journal hash chain" check failing at that seq',
    packs: () => [
      {
        id: 'identity.scripted',
        guest: 'script.ts',
        module: '',
        manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'kv.get'] } },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const r1 = await ctx.call('identity.scripted', { calls: [{ name: 'kv.get', args: { key: 'k' } }], echo: 'one' });
      const r2 = await ctx.call('identity.scripted', {
        calls: [
          { name: 'kv.get', args: { key: 'k' } },
          { name: 'clock.now_unix', args: {} },
        ],
        echo: 'two',
      });
      expectSuccess(r1);
      expectSuccess(r2);
      const clean = await host.runs.verify(r1.run_id!, 30_000);
      expect(clean.match, `the untouched run does not verify: ${JSON.stringify(clean)}`);
      const cliClean = await runHelix(['verify', r1.run_id!, '--home', host.home], { cwd: ctx.env.dir });
      expectExit(cliClean, 0, 'helix verify of an untouched run');

      // The run record's output value, as a replay would answer it.
      const record = host.diagnostics.record('runs', r1.run_id!) as Record<string, unknown> & {
        result: { output: Record<string, unknown> };
      };
      await host.diagnostics.plant('runs', r1.run_id!, {
        ...record,
        result: { ...record.result, output: { ...record.result.output, echo: 'forged' } },
      });
      const forged = await host.runs.verify(r1.run_id!, 30_000);
      ctx.observe('verify_after_output_edit', forged);
      expect(
        !forged.match && (forged.first_difference as { where?: string } | undefined)?.where === 'output value',
        `verify after the output edit: ${JSON.stringify(forged).slice(0, 600)}`,
      );
      const cli = await runHelix(['verify', r1.run_id!, '--home', host.home], { cwd: ctx.env.dir });
      expectExit(cli, 1, 'helix verify of the edited run');
      expect(
        /output value/.test(cli.stdout + cli.stderr),
        `helix verify does not name the output value: ${(cli.stdout + cli.stderr).slice(0, 600)}`,
      );

      // A journal entry's answer.
      const journal = host.runs.journal(r2.run_id!);
      if (journal.length < 2) throw new CheckFailure(`the run journaled ${journal.length} calls, expected 2`);
      await host.diagnostics.plant('journal', [r2.run_id!, 1], { ...journal[1]!, result: { unix_ms: 1, unix_s: 0 } });
      const chain = await host.runs.verify(r2.run_id!, 30_000);
      ctx.observe('verify_after_journal_edit', chain);
      expect(
        !chain.match &&
          chain.checks.some((c) => c.check === 'journal hash chain' && !c.ok) &&
          (chain.first_difference as { seq?: number } | undefined)?.seq === 1,
        `verify after the journal edit: ${JSON.stringify(chain).slice(0, 600)}`,
      );
      const cli2 = await runHelix(['verify', r2.run_id!, '--home', host.home], { cwd: ctx.env.dir });
      expectExit(cli2, 1, 'helix verify of the run with an edited journal');
    },
  },
];
