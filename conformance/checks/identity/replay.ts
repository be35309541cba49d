// Identity checks of replay: the same call replays its stored run, even from a guest that would
// answer otherwise, and an input equal in canonical form is the same run (ABI-RUNID-001).
import path from 'node:path';
import { ResponseEnvelopeSchema } from '../../../abi/index.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import { expectExit, runHelix } from '../../kit/files-kit.js';
import { RUN_ID } from './shared.js';

/** The checks of this file, in the report's order. */
export const replayChecks: readonly Check[] = [
  {
    id: 'identity.replay-stateful-guest',
    title:
      'The same call replays its stored run, even from a guest that counts its executions, and a canonically equal input is the same run',
    category: 'identity',
    abi: ['ABI-RUNID-001'],
    engines: ['helix', 'extism'],
    expected:
      'a second identical call answers replayed: true with the same run_id and output and fuel_used 0; the same input written with other key order, 1.0 for 1 and \\u0041 for A through helix call (another process, same home) is the same run, replayed; a different input is a new run executed (fuel > 0)',
    packs: (engine) => [engine.pack('identity.counter', engine.guests.executionCounter, {}, { outputSchema: { type: 'object' } })],
    async run(ctx) {
      const first = await ctx.call('identity.counter', { a: 1, b: 'A' });
      expectSuccess(first);
      expect(RUN_ID.test(first.run_id ?? ''), `run_id ${first.run_id} is not run_ and 32 hex digits`);
      expect(first.replayed === false && first.metrics.fuel_used > 0, `the first call was not executed: ${JSON.stringify(first.metrics)}`);
      const again = await ctx.call('identity.counter', { a: 1, b: 'A' });
      expect(
        again.replayed === true && again.run_id === first.run_id,
        `the second call was not a replay of ${first.run_id}: replayed ${again.replayed}, run ${again.run_id}`,
      );
      expect(
        JSON.stringify(again.output) === JSON.stringify(first.output) && again.metrics.fuel_used === 0,
        `the replay answered ${JSON.stringify(again.output)} with fuel ${again.metrics.fuel_used}, the run ${JSON.stringify(first.output)}`,
      );
      const host = await ctx.host();
      const cli = await runHelix(
        [
          'call',
          'identity.counter',
          '--toolpacks',
          host.toolpacksDir,
          '--policy',
          path.join(ctx.env.dir, 'policy.yaml'),
          '--home',
          host.home,
          '--input',
          '{"b":"\\u0041","a":1.0}',
        ],
        { cwd: ctx.env.dir },
      );
      expectExit(cli, 0, 'helix call with the same input written otherwise');
      const viaCli = ResponseEnvelopeSchema.parse(JSON.parse(cli.stdout));
      expect(
        viaCli.run_id === first.run_id && viaCli.replayed === true,
        `helix call {"b":"\\u0041","a":1.0} gave run ${viaCli.run_id} (replayed ${viaCli.replayed}), not a replay of ${first.run_id}`,
      );
      const other = await ctx.call('identity.counter', { a: 1, b: 'B' });
      expectSuccess(other);
      expect(
        other.run_id !== first.run_id && other.replayed === false && other.metrics.fuel_used > 0,
        `a different input replayed run ${other.run_id}`,
      );
      ctx.observe('outputs', { first: first.output, replay: again.output, other: other.output });
      ctx.observe('run_ids', { first: first.run_id, other: other.run_id });
    },
  },
];
