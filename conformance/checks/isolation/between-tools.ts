// Isolation checks between concurrent calls and between tools: calls in flight together see
// nothing of each other, one tool's kv keys stay its own, and a run's output is seen by no one
// before (or unless) that run ends well (ABI-CALL-001, ABI-CAP-008, ABI-CAP-010).
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { answers, cap, describeFlags, plantPack, scriptPack, show } from './shared.js';

/** The checks of this file, in the report's order. */
export const betweenToolChecks: readonly Check[] = [
  {
    id: 'isolation.concurrent-calls',
    title: '24 concurrent calls, each with its own secret, see nothing of each other and get their own answers',
    category: 'isolation',
    abi: ['ABI-CALL-001'],
    engines: ['helix', 'extism'],
    expected:
      '24 plant calls and 24 echo calls in flight together: every plant call finds nothing (flags 0), every echo answers exactly its own input',
    packs: (engine) => [plantPack(engine, 'iso.plant')!, engine.pack('iso.echo', engine.guests.echo())],
    async run(ctx) {
      const n = 24;
      const plants = Array.from({ length: n }, (_, i) => ctx.call('iso.plant', { secret: `CONCURRENT-${i}-${'x'.repeat(i)}` }));
      const echoes = Array.from({ length: n }, (_, i) => ctx.call('iso.echo', { secret: `ECHO-${i}`, pad: 'e'.repeat(i * 7) }));
      const [p, e] = await Promise.all([Promise.all(plants), Promise.all(echoes)]);
      const flags = p.map((r) => ctx.engine.guests.planted(expectSuccess(r)).flags);
      ctx.observe('plant_flags', flags);
      for (const [i, f] of flags.entries()) expect(f === 0, `concurrent plant call ${i} found ${describeFlags(f)}`);
      e.forEach((r, i) => {
        const out = expectSuccess(r);
        expect(
          out.secret === `ECHO-${i}` && out.pad === 'e'.repeat(i * 7),
          `echo call ${i} answered another call's input: ${show(out, 200)}`,
        );
      });
    },
  },
  {
    id: 'isolation.kv-namespaces',
    title: "One tool's kv keys are invisible to another tool: get, list, delete and put stay in each tool's own namespace",
    category: 'isolation',
    abi: ['ABI-CAP-010'],
    engines: ['helix'],
    expected:
      'after tool A puts "secret", tool B: kv.get finds nothing, kv.list lists nothing, kv.delete of "secret" removes nothing of A; B puts its own "secret"; A still reads its own value and lists only its key',
    packs: () => {
      const kv = ['kv.put', 'kv.get', 'kv.list', 'kv.delete'];
      return [scriptPack('iso.kv_a', kv), scriptPack('iso.kv_b', kv)];
    },
    async run(ctx) {
      const [put] = answers(await ctx.call('iso.kv_a', { calls: [cap('kv.put', { key: 'secret', value: 'A-ONLY-VALUE' })] }));
      expect(put?.ok === true, `A's kv.put answered ${JSON.stringify(put)}`);
      const [get, list] = answers(await ctx.call('iso.kv_b', { calls: [cap('kv.get', { key: 'secret' }), cap('kv.list', {})] }));
      ctx.observe('b_sees', { get, list });
      expect(get?.found === false, `tool B read tool A's key: ${JSON.stringify(get)}`);
      expect(JSON.stringify(list).includes('secret') === false, `tool B's kv.list shows tool A's key: ${JSON.stringify(list)}`);
      const [del] = answers(await ctx.call('iso.kv_b', { calls: [cap('kv.delete', { key: 'secret' })] }));
      ctx.observe('b_deletes_a_key', del);
      answers(
        await ctx.call('iso.kv_b', { calls: [cap('kv.put', { key: 'secret', value: 'B-VALUE' }), cap('kv.delete', { key: 'other' })] }),
      );
      const [aGet, aList] = answers(await ctx.call('iso.kv_a', { calls: [cap('kv.get', { key: 'secret' }), cap('kv.list', {})] }));
      ctx.observe('a_sees', { get: aGet, list: aList });
      expect(JSON.stringify(aList?.keys) === '["secret"]', `tool A lists ${JSON.stringify(aList)}, not its one key`);
      expect(
        aGet?.found === true && aGet.value === 'A-ONLY-VALUE',
        `tool A's value changed after tool B wrote the same key: ${JSON.stringify(aGet)}`,
      );
    },
  },
  {
    id: 'isolation.unsealed-output',
    title: "A run's sealed output is invisible to a concurrent tool while the run goes on, and never appears when the run fails",
    category: 'isolation',
    abi: ['ABI-CAP-008'],
    engines: ['helix'],
    expected:
      'a writer seals an output labelled iso-secret-output, then storms capability calls until R-CAP-CALL-LIMIT ends it; a reader listing the store while the writer runs and afterwards sees an imported artifact but never the output, and the store holds no artifact of the failed run',
    packs: () => [
      scriptPack('iso.writer', ['artifact.write', 'clock.now_unix'], {
        timeoutMs: 60_000,
        limits: { ...DEFAULT_LIMITS, maxCapabilityCalls: 2000 },
        declaredOutputs: [{ role: 'report', type: 'text', label: 'iso-secret-output' }],
      }),
      scriptPack('iso.reader', ['artifact.list']),
    ],
    async run(ctx) {
      const host = await ctx.host();
      // An artifact every tool may see: the reader's listing must show it, so an empty listing proves nothing.
      const visible = await host.artifacts.importInline('visible to all', { label: 'iso-visible' });
      let writerDone = false;
      const writer = ctx
        .call('iso.writer', {
          calls: [cap('artifact.write', { role: 'report', data: 'SECRET-OUTPUT-BYTES', label: 'iso-secret-output', final: true })],
          storm: 'clock.now_unix',
        })
        .finally(() => (writerDone = true));
      await new Promise((r) => setTimeout(r, 150));
      const during = await ctx.call('iso.reader', { calls: [cap('artifact.list', { limit: 1000 })], echo: 'during' });
      const duringWhileRunning = !writerDone;
      const w = await writer;
      expectOutcome(w, 'terminal_error', 'R-CAP-CALL-LIMIT');
      const [listed] = answers(during);
      ctx.observe('reader_during', { writer_still_running: duringWhileRunning, listed });
      expect(
        JSON.stringify(listed).includes(visible.id),
        `the reader's listing does not show the imported artifact ${visible.id}: ${show(listed, 300)}`,
      );
      expect(
        !JSON.stringify(listed).includes('iso-secret-output'),
        `the reader saw the writer's sealed output while the writer ran: ${show(listed, 300)}`,
      );
      const [after] = answers(await ctx.call('iso.reader', { calls: [cap('artifact.list', { limit: 1000 })], echo: 'after' }));
      expect(!JSON.stringify(after).includes('iso-secret-output'), `the failed run's output became visible: ${show(after, 300)}`);
      const stored = host.artifacts.list().filter((a) => a.created_by_run === w.run_id || a.label === 'iso-secret-output');
      ctx.observe('writer', { run_id: w.run_id, code: w.error?.code, stored_outputs: stored.length });
      expect(stored.length === 0, `the store holds ${stored.length} artifact(s) of the failed run`);
      if (!duringWhileRunning)
        ctx.note('the writer ended before the reader answered; the check still shows the failed run never published its output');
    },
  },
];
