// Identity checks of what makes a new run: any change of limits, policy, contract or allowlist is a
// new run (a removed capability refused, never replayed), while descriptive edits and a toolpack
// moved on disk replay (ABI-RUNID-002..005).
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { loadPolicy } from '../../../host/5-host/toolpacks.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { compileGuest } from '../../kit/as-guest.js';
import type { ResponseEnvelope } from '../../../abi/index.js';
import type { Host } from '../../../host/5-host/host.js';
import { echoModule } from '../../kit/guest-wat.js';
import { DEFAULT_LIMITS, writeToolpack } from '../../kit/toolpack.js';
import { checkDefaultPolicy } from '../../runner.js';
import {
  callOn,
  capsOf,
  commonProps,
  inSchemaOf,
  limitsOf,
  manifestOf,
  ownPolicy,
  packOf,
  runEdits,
  setting,
  withHost,
  type EditPack,
} from './shared.js';

/** The checks of this file, in the report's order. */
export const editChecks: readonly Check[] = [
  {
    id: 'identity.limits-and-policy',
    title:
      'A narrower memory limit, other policy ceilings or another grant make a new run; the same policy in another home gives the same run id',
    category: 'identity',
    abi: ['ABI-RUNID-001'],
    engines: ['helix'],
    expected:
      'memory_mb_limit 1 narrowing a 32-page tool to 16 pages gives a new run_id whose params show max_memory_pages 16; a host under the same policy text on another home gives the identical run_id; a policy with a lower fuel ceiling, and one with an extra grant, each give a run_id never seen',
    packs: () => [{ id: 'identity.echo', module: echoModule(), manifest: { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 32 } } }],
    async run(ctx) {
      const input = { k: 'limits' };
      const base = await ctx.call('identity.echo', input);
      expectSuccess(base);
      const narrowed = await ctx.call('identity.echo', input, { request: { constraints: { memory_mb_limit: 1 } } });
      expectSuccess(narrowed);
      expect(narrowed.run_id !== base.run_id && narrowed.replayed === false, `memory_mb_limit 1 replayed ${base.run_id}`);
      const host = await ctx.host();
      const pages = (r: ResponseEnvelope): unknown =>
        (host.runs.show(r.run_id!).params as { limits?: { max_memory_pages?: number } }).limits?.max_memory_pages;
      ctx.observe('max_memory_pages', { base: pages(base), narrowed: pages(narrowed) });
      expect(
        pages(narrowed) === 16 && pages(base) === 32,
        `params limits: base ${String(pages(base))}, narrowed ${String(pages(narrowed))}`,
      );
      const doc = checkDefaultPolicy(ctx.env);
      const ids = new Set([base.run_id, narrowed.run_id]);
      const variants: Array<[string, Record<string, unknown>, boolean]> = [
        ['the same policy, another home', doc, true],
        ['a lower fuel ceiling', { ...doc, ceilings: { fuel: 50_000_000 } }, false],
        ['an extra grant', { ...doc, grants: { ...(doc.grants as Record<string, unknown>), 'identity.*': ['secrets.get.token'] } }, false],
      ];
      const seen: Record<string, string | null | undefined> = {};
      for (const [i, [what, policyDoc, same]] of variants.entries()) {
        const r = await withHost(
          ctx,
          host.toolpacksDir,
          path.join(ctx.env.dir, `home-${i}`),
          ownPolicy(ctx, `policy-${i}.yaml`, policyDoc),
          (h) => callOn(h, 'identity.echo', input),
        );
        expectSuccess(r);
        seen[what] = r.run_id;
        if (same) expect(r.run_id === base.run_id, `${what}: run ${r.run_id}, expected ${base.run_id}`);
        else {
          expect(!ids.has(r.run_id), `${what}: run ${r.run_id} was seen before`);
          ids.add(r.run_id);
        }
      }
      ctx.observe('run_ids', { base: base.run_id, narrowed: narrowed.run_id, ...seen });
    },
  },
  {
    id: 'identity.contract-edits',
    title: "Every edit of a contract field or of a nested schema file's content makes the next identical call a new run, executed",
    category: 'identity',
    abi: ['ABI-RUNID-002', 'ABI-RUNID-004', 'ABI-RUNID-007'],
    engines: ['helix'],
    expected:
      'after each edit (fuel, maxMemoryPages, maxOutputBytes, maxInputBytes, maxCapabilityCalls, deterministic, an allow entry, the module bytes, maxLength and default in a schema file reached through a nested $ref) the same call on the same home answers replayed: false with a run_id never seen',
    async run(ctx) {
      const edits: ReadonlyArray<readonly [string, (p: EditPack) => void]> = [
        ['limits.fuel', setting(limitsOf, 'fuel', DEFAULT_LIMITS.fuel + 1)],
        ['limits.maxMemoryPages', setting(limitsOf, 'maxMemoryPages', 17)],
        ['limits.maxOutputBytes', setting(limitsOf, 'maxOutputBytes', DEFAULT_LIMITS.maxOutputBytes + 1)],
        ['limits.maxInputBytes', setting(limitsOf, 'maxInputBytes', DEFAULT_LIMITS.maxInputBytes + 1)],
        ['limits.maxCapabilityCalls', setting(limitsOf, 'maxCapabilityCalls', 50)],
        ['deterministic', setting(manifestOf, 'deterministic', 'idempotent')],
        ['capabilities.allow', setting(capsOf, 'allow', ['clock.now_unix', 'log.emit', 'kv.get'])],
        ['module bytes (digest)', setting(packOf, 'module', echoModule('(func $unused)'))],
        ['nested schema maxLength', setting(commonProps, 'maxLength', 99)],
        ['nested schema default', setting(commonProps, 'default', 'd')],
      ];
      const { base, results } = await runEdits(ctx, edits);
      const seen = new Set([base.run_id]);
      for (const [what, r] of results) {
        expectSuccess(r);
        expect(r.replayed === false, `after an edit of ${what} the call replayed ${r.run_id}`);
        expect(!seen.has(r.run_id), `after an edit of ${what} the run ${r.run_id} is not new`);
        seen.add(r.run_id);
      }
    },
  },
  {
    id: 'identity.descriptive-edits',
    title: 'Edits no outcome depends on (description, timeoutMs, module path, schema annotations, allow order) replay the first run',
    category: 'identity',
    abi: ['ABI-RUNID-003', 'ABI-RUNID-004', 'ABI-RUNID-005', 'ABI-RUNID-007'],
    engines: ['helix'],
    expected:
      'after each edit (description, timeoutMs, the module file renamed with module: updated, title/description/$comment/examples in the schema files, the allow list reordered) the same call answers replayed: true with the first run_id and output',
    async run(ctx) {
      const edits: ReadonlyArray<readonly [string, (p: EditPack) => void]> = [
        ['description', setting(manifestOf, 'description', 'another description')],
        ['timeoutMs', setting(manifestOf, 'timeoutMs', 9000)],
        ['module path', setting(packOf, 'moduleName', 'renamed.wasm')],
        ['schema title', setting(inSchemaOf, 'title', 'another title')],
        [
          'nested schema description, $comment, examples',
          (p) => void Object.assign(p.common, { description: 'edited', $comment: 'a comment', examples: ['x'] }),
        ],
        ['allow order', setting(capsOf, 'allow', ['log.emit', 'clock.now_unix'])],
      ];
      const { base, results } = await runEdits(ctx, edits);
      for (const [what, r] of results) {
        expectSuccess(r);
        expect(
          r.replayed === true && r.run_id === base.run_id,
          `after an edit of ${what}: run ${r.run_id} replayed ${r.replayed}, expected a replay of ${base.run_id}`,
        );
        expect(JSON.stringify(r.output) === JSON.stringify(base.output), `after an edit of ${what} the output changed`);
      }
    },
  },
  {
    id: 'identity.allowlist-removed',
    title: 'After a capability leaves the allowlist, the call that used it is refused A-AUTH-FORBIDDEN, never a replay of its success',
    category: 'identity',
    abi: ['ABI-RUNID-007', 'ABI-RUNID-002'],
    engines: ['helix'],
    expected:
      'a script guest ending with a terminal clock.now_unix call succeeds; with clock.now_unix removed from capabilities.allow the identical call is a new run (replayed: false) ending terminal_error A-AUTH-FORBIDDEN',
    async run(ctx) {
      const plugins = path.join(ctx.env.dir, 'allow-plugins');
      const home = path.join(ctx.env.dir, 'allow-home');
      const policy = ownPolicy(ctx, 'allow-policy.yaml');
      const module = await compileGuest('script.ts');
      const write = async (allow: string[]): Promise<void> => {
        rmSync(plugins, { recursive: true, force: true });
        await writeToolpack(plugins, { id: 'identity.clock', module, manifest: { capabilities: { abiVersion: 1, allow } } });
      };
      const input = { terminal: { name: 'clock.now_unix', args: {} } };
      await write(['clock.now_unix']);
      const first = await withHost(ctx, plugins, home, policy, (h) => callOn(h, 'identity.clock', input));
      expectSuccess(first);
      await write([]);
      const after = await withHost(ctx, plugins, home, policy, (h) => callOn(h, 'identity.clock', input));
      ctx.observe('outcomes', {
        first: { run_id: first.run_id, status: first.status },
        after: { run_id: after.run_id, status: after.status, code: after.error?.code, replayed: after.replayed },
      });
      expect(
        after.replayed === false && after.run_id !== first.run_id,
        `the call replayed ${first.run_id} after the capability left the allowlist`,
      );
      expectOutcome(after, 'terminal_error', 'A-AUTH-FORBIDDEN');
    },
  },
  {
    id: 'identity.moved-toolpack',
    title: 'The same toolpack files copied to another directory, loaded by another host, give the same contract digest and run ids',
    category: 'identity',
    abi: ['ABI-RUNID-008'],
    engines: ['helix'],
    expected:
      'a copy of the pack four directories deeper under another toolpacks directory, loaded by a second host (another home, the same policy text), gives the same params.tool.contract_digest and the same run_id for the same call',
    packs: () => [
      {
        id: 'identity.moved',
        module: echoModule(),
        inputSchema: { $ref: 'schemas/in.json' },
        extraFiles: {
          'schemas/in.json': JSON.stringify({ type: 'object', properties: { n: { $ref: 'n.json' } } }),
          'schemas/n.json': '{"type":"integer"}',
        },
      },
    ],
    async run(ctx) {
      const r = await ctx.call('identity.moved', { n: 7 });
      expectSuccess(r);
      const host = await ctx.host();
      const digest = (h: Host, id: string): unknown =>
        (h.runs.show(id).params as { tool?: { contract_digest?: unknown } }).tool?.contract_digest;
      const d1 = digest(host, r.run_id!);
      const elsewhere = path.join(ctx.env.dir, 'x', 'y', 'z', 'other-plugins');
      cpSync(path.join(host.toolpacksDir, 'identity.moved'), path.join(elsewhere, 'renamed-dir'), { recursive: true });
      const [r2, d2] = await withHost(
        ctx,
        elsewhere,
        path.join(ctx.env.dir, 'home-moved'),
        loadPolicy(path.join(ctx.env.dir, 'policy.yaml')),
        async (h) => {
          const out = await callOn(h, 'identity.moved', { n: 7 });
          return [out, typeof out.run_id === 'string' ? digest(h, out.run_id) : undefined] as const;
        },
      );
      expectSuccess(r2);
      ctx.observe('contract_digests', { original: d1, moved: d2 });
      ctx.observe('run_ids', { original: r.run_id, moved: r2.run_id });
      expect(typeof d1 === 'string' && /^sha256:[0-9a-f]{64}$/.test(d1), `params.tool.contract_digest is ${String(d1)}`);
      expect(d1 === d2, `the moved pack has contract digest ${String(d2)}, the original ${String(d1)}`);
      expect(r2.run_id === r.run_id, `the moved pack gave run ${r2.run_id}, the original ${r.run_id}`);
    },
  },
];
