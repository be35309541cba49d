// Identity checks of built-in tools, which have no contract of their own, and of idempotency keys,
// which name one call and refuse another under the same key (ABI-RUNID-006, ABI-RUNID-007).
import { loadPolicy } from '../../../host/5-host/toolpacks.js';
import path from 'node:path';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { echoModule, numberResultModule } from '../../kit/guest-wat.js';
import { writeToolpack } from '../../kit/toolpack.js';
import { callOn, withHost } from './shared.js';

/** The checks of this file, in the report's order. */
export const builtinAndKeyChecks: readonly Check[] = [
  {
    id: 'identity.builtin-no-contract',
    title: 'A host built-in has no contract digest: its run id depends on the artifact content, not on which toolpacks are loaded',
    category: 'identity',
    abi: ['ABI-RUNID-006', 'ABI-RUNID-001'],
    engines: ['helix'],
    expected:
      'helix.artifact_get over an imported artifact records params.tool without contract_digest; a second host with other toolpacks, on another home, importing the same bytes (another artifact id) gives the same run_id',
    packs: () => [{ id: 'identity.echo', module: echoModule() }],
    async run(ctx) {
      const host = await ctx.host();
      const art = await host.artifacts.importInline('>r1\nACGT\n', { label: 'builtin identity' });
      const r = await ctx.call('helix.artifact_get', { artifact_id: art.id });
      expectSuccess(r);
      const tool = (host.runs.show(r.run_id!).params as { tool?: Record<string, unknown> }).tool ?? {};
      ctx.observe('params.tool', tool);
      expect(
        !('contract_digest' in tool) || tool.contract_digest === null,
        `a built-in's params carry contract_digest ${String(tool.contract_digest)}`,
      );
      const other = path.join(ctx.env.dir, 'other-plugins');
      await writeToolpack(other, { id: 'identity.other', module: numberResultModule('(i64.const 7)'), outputSchema: { type: 'object' } });
      const [r2, id2] = await withHost(
        ctx,
        other,
        path.join(ctx.env.dir, 'home-builtin'),
        loadPolicy(path.join(ctx.env.dir, 'policy.yaml')),
        async (h) => {
          const a2 = await h.artifacts.importInline('>r1\nACGT\n');
          return [await callOn(h, 'helix.artifact_get', { artifact_id: a2.id }), a2.id] as const;
        },
      );
      expectSuccess(r2);
      ctx.observe('run_ids', { first: r.run_id, other_host: r2.run_id, artifact_ids: [art.id, id2] });
      expect(id2 !== art.id, 'the second import reused the artifact id');
      expect(r2.run_id === r.run_id, `the built-in's run id moved with the toolpacks loaded: ${r2.run_id} vs ${r.run_id}`);
    },
  },
  {
    id: 'identity.idempotency-conflict',
    title: 'An idempotency key reused for another input or another tool is refused; the key itself does not enter the run id',
    category: 'identity',
    abi: ['ABI-RUNID-001'],
    engines: ['helix'],
    expected:
      'a keyed call replays the identical unkeyed run (same run_id); the key again with the same request replays; with another input or another tool it is invalid_request I-REQ-IDEMPOTENCY-CONFLICT naming details.bound_run_id, and nothing runs',
    packs: () => [
      { id: 'identity.echo', module: echoModule() },
      { id: 'identity.echo2', module: echoModule() },
    ],
    async run(ctx) {
      const key = { constraints: { idempotency_key: 'conformance-key-0001' } };
      const plain = await ctx.call('identity.echo', { v: 1 });
      expectSuccess(plain);
      const keyed = await ctx.call('identity.echo', { v: 1 }, { request: key });
      expect(
        keyed.status === 'success' && keyed.run_id === plain.run_id && keyed.replayed === true,
        `the keyed call gave run ${keyed.run_id} (replayed ${keyed.replayed}), not ${plain.run_id}`,
      );
      const again = await ctx.call('identity.echo', { v: 1 }, { request: key });
      expect(again.replayed === true && again.run_id === plain.run_id, `the same key and request did not replay: ${again.run_id}`);
      const before = (await ctx.host()).runs.list().length;
      for (const [what, tool, input] of [
        ['another input', 'identity.echo', { v: 2 }],
        ['another tool', 'identity.echo2', { v: 1 }],
      ] as const) {
        const r = await ctx.call(tool, input, { request: key });
        expectOutcome(r, 'invalid_request', 'I-REQ-IDEMPOTENCY-CONFLICT');
        expect(
          (r.error?.details as { bound_run_id?: string } | undefined)?.bound_run_id === plain.run_id,
          `${what}: details ${JSON.stringify(r.error?.details)}`,
        );
        expect(r.metrics.fuel_used === 0, `${what}: the conflicting call ran (fuel ${r.metrics.fuel_used})`);
      }
      const after = (await ctx.host()).runs.list().length;
      ctx.observe('runs', { before, after });
      expect(after === before, `the refused calls recorded ${after - before} runs`);
    },
  },
];
