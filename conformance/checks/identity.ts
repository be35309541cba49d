// Conformance checks: run identity, replay and verify. A run's id holds everything that can change
// a call's outcome and nothing else: the same call replays its stored result (even from a guest
// that would answer otherwise), any change of input, limits, policy or contract is a new run, a
// descriptive edit replays, and a tampered run or journal is found by verify (ABI-RUNID-001..009).
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../../abi/index.js';
import { createHost, hostStore, type Host } from '../../host/5-host/host.js';
import { loadPolicy, type LoadedPolicy } from '../../host/4-calls/policy/load-policy.js';
import { readJournal } from '../../host/3-store/journal.js';
import { rawDatabases } from '../../host/3-store/raw-access.js';
import { CheckFailure, expect, expectOutcome, expectSuccess, type Check, type CheckContext } from '../check.js';
import { extismWat } from '../kit/extism-wat.js';
import { expectExit, runHelix } from '../kit/files-kit.js';
import { compileGuest } from '../kit/as-guest.js';
import { echoModule, numberResultModule } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS, writeToolpack, type ToolpackSpec } from '../kit/toolpack.js';
import { checkDefaultPolicy } from '../runner.js';

const RUN_ID = /^run_[0-9a-f]{32}$/;

/** A guest that counts its executions in a global and answers the count: a re-execution on a kept instance answers otherwise. */
const COUNTER = numberResultModule('(global.set $count (i64.add (global.get $count) (i64.const 1))) (global.get $count)', {
  extra: '(global $count (mut i64) (i64.const 0))',
});

/** The same as an extism/v1 plugin: answers {"value":N} with N its execution count (one digit). */
const EXTISM_COUNTER = extismWat(
  `(global.set $count (i32.add (global.get $count) (i32.const 1)))
    (i32.store8 (i32.const 9) (i32.add (i32.const 48) (global.get $count)))
    (call $output_set (call $emit (i32.const 0) (i32.const 11)) (i64.const 11))
    (i32.const 0)`,
  { data: '{\\"value\\":0}', extra: '(global $count (mut i32) (i32.const 0))' },
);

/** One call on `host`, parsed. */
async function callOn(host: Host, tool: string, input: unknown, request: Record<string, unknown> = {}): Promise<ResponseEnvelope> {
  return ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input, ...request }));
}

/** Opens a host over `plugins` on `home` under `policy`, runs `body`, closes it. */
async function withHost<T>(
  ctx: CheckContext,
  plugins: string,
  home: string,
  policy: LoadedPolicy,
  body: (h: Host) => Promise<T>,
): Promise<T> {
  const h = await createHost({ pluginsDir: plugins, home, policy, warn: (l) => ctx.note(`host warning: ${l}`) });
  try {
    return await body(h);
  } finally {
    await h.close();
  }
}

/** The check's default policy written to a file of its own and loaded, for the extra hosts a check opens. */
function ownPolicy(ctx: CheckContext, name: string, doc: Record<string, unknown> = checkDefaultPolicy(ctx.env)): LoadedPolicy {
  const file = path.join(ctx.env.dir, name);
  writeFileSync(file, stringify(doc));
  return loadPolicy(file);
}

/** The base toolpack of the edit checks: limits, an allowlist and a schema with a nested $ref. */
interface EditPack {
  manifest: Record<string, unknown>;
  inSchema: Record<string, unknown>;
  common: Record<string, unknown>;
  moduleName?: string;
  module?: string;
}
const basePack = (): EditPack => ({
  manifest: { limits: { ...DEFAULT_LIMITS }, capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'log.emit'] } },
  inSchema: { type: 'object', title: 'edit input', properties: { s: { $ref: 'common.json' } } },
  common: { type: 'string', maxLength: 100, description: 'a string' },
});

/** Writes the edit pack afresh under `plugins`. */
async function writeEditPack(plugins: string, p: EditPack): Promise<void> {
  rmSync(plugins, { recursive: true, force: true });
  const spec: ToolpackSpec = {
    id: 'identity.edit',
    dirName: 'pack',
    module: p.module ?? echoModule(),
    manifest: p.manifest,
    inputSchema: { $ref: 'schemas/in.json' },
  };
  const { manifestPath } = await writeToolpack(plugins, spec);
  const dir = path.dirname(manifestPath);
  mkdirSync(path.join(dir, 'schemas'));
  writeFileSync(path.join(dir, 'schemas', 'in.json'), JSON.stringify(p.inSchema));
  writeFileSync(path.join(dir, 'schemas', 'common.json'), JSON.stringify(p.common));
  if (p.moduleName !== undefined) {
    renameSync(path.join(dir, 'tool.wasm'), path.join(dir, p.moduleName));
    const text = readFileSync(manifestPath, 'utf8').replace('module: tool.wasm', `module: ${p.moduleName}`);
    writeFileSync(manifestPath, text);
  }
}

/** Calls identity.edit after each edit on one home; returns each variant's outcome. */
async function runEdits(
  ctx: CheckContext,
  edits: ReadonlyArray<readonly [string, (p: EditPack) => void]>,
): Promise<{ base: ResponseEnvelope; results: Array<[string, ResponseEnvelope]> }> {
  const plugins = path.join(ctx.env.dir, 'edit-plugins');
  const home = path.join(ctx.env.dir, 'edit-home');
  const policy = ownPolicy(ctx, 'edit-policy.yaml');
  const input = { s: 'same input' };
  await writeEditPack(plugins, basePack());
  const base = await withHost(ctx, plugins, home, policy, (h) => callOn(h, 'identity.edit', input));
  expectSuccess(base);
  const results: Array<[string, ResponseEnvelope]> = [];
  for (const [what, edit] of edits) {
    const p = basePack();
    edit(p);
    await writeEditPack(plugins, p);
    results.push([what, await withHost(ctx, plugins, home, policy, (h) => callOn(h, 'identity.edit', input))]);
  }
  ctx.observe('base_run_id', base.run_id);
  ctx.observe('edits', Object.fromEntries(results.map(([w, r]) => [w, { run_id: r.run_id, replayed: r.replayed, status: r.status }])));
  return { base, results };
}

const limitsOf = (p: EditPack): Record<string, unknown> => p.manifest.limits as Record<string, unknown>;
const capsOf = (p: EditPack): Record<string, unknown> => p.manifest.capabilities as Record<string, unknown>;
const commonProps = (p: EditPack): Record<string, unknown> => p.common;

export const identityChecks: readonly Check[] = [
  {
    id: 'identity.replay-stateful-guest',
    title:
      'The same call replays its stored run, even from a guest that counts its executions, and a canonically equal input is the same run',
    category: 'identity',
    abi: ['ABI-RUNID-001'],
    engines: ['helix', 'extism'],
    expected:
      'a second identical call answers replayed: true with the same run_id and output and fuel_used 0; the same input written with other key order, 1.0 for 1 and \\u0041 for A through helix call (another process, same home) is the same run, replayed; a different input is a new run executed (fuel > 0)',
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'identity.counter',
            module: EXTISM_COUNTER,
            manifest: { abi: 'extism/v1', entrypoint: 'run' },
            outputSchema: { type: 'object' },
          }
        : { id: 'identity.counter', module: COUNTER, outputSchema: { type: 'object' } },
    ],
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
          '--plugins',
          host.pluginsDir,
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
          host.pluginsDir,
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
        ['limits.fuel', (p) => void (limitsOf(p).fuel = DEFAULT_LIMITS.fuel + 1)],
        ['limits.maxMemoryPages', (p) => void (limitsOf(p).maxMemoryPages = 17)],
        ['limits.maxOutputBytes', (p) => void (limitsOf(p).maxOutputBytes = DEFAULT_LIMITS.maxOutputBytes + 1)],
        ['limits.maxInputBytes', (p) => void (limitsOf(p).maxInputBytes = DEFAULT_LIMITS.maxInputBytes + 1)],
        ['limits.maxCapabilityCalls', (p) => void (limitsOf(p).maxCapabilityCalls = 50)],
        ['deterministic', (p) => void (p.manifest.deterministic = 'idempotent')],
        ['capabilities.allow', (p) => void (capsOf(p).allow = ['clock.now_unix', 'log.emit', 'kv.get'])],
        ['module bytes (digest)', (p) => void (p.module = echoModule('(func $unused)'))],
        ['nested schema maxLength', (p) => void (commonProps(p).maxLength = 99)],
        ['nested schema default', (p) => void (commonProps(p).default = 'd')],
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
        ['description', (p) => void (p.manifest.description = 'another description')],
        ['timeoutMs', (p) => void (p.manifest.timeoutMs = 9000)],
        ['module path', (p) => void (p.moduleName = 'renamed.wasm')],
        ['schema title', (p) => void (p.inSchema.title = 'another title')],
        [
          'nested schema description, $comment, examples',
          (p) => void Object.assign(p.common, { description: 'edited', $comment: 'a comment', examples: ['x'] }),
        ],
        ['allow order', (p) => void (capsOf(p).allow = ['log.emit', 'clock.now_unix'])],
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
      'a copy of the pack four directories deeper under another plugins directory, loaded by a second host (another home, the same policy text), gives the same params.tool.contract_digest and the same run_id for the same call',
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
      cpSync(path.join(host.pluginsDir, 'identity.moved'), path.join(elsewhere, 'renamed-dir'), { recursive: true });
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
          (r.error?.details as { bound_run_id?: string }).bound_run_id === plain.run_id,
          `${what}: details ${JSON.stringify(r.error?.details)}`,
        );
        expect(r.metrics.fuel_used === 0, `${what}: the conflicting call ran (fuel ${r.metrics.fuel_used})`);
      }
      const after = (await ctx.host()).runs.list().length;
      ctx.observe('runs', { before, after });
      expect(after === before, `the refused calls recorded ${after - before} runs`);
    },
  },
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
      const store = hostStore(host);
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
      const record = rawDatabases(store).runs.get(r1.run_id!) as Record<string, unknown> & { result: { output: Record<string, unknown> } };
      await rawDatabases(store).runs.put(r1.run_id!, {
        ...record,
        result: { ...record.result, output: { ...record.result.output, echo: 'forged' } },
      } as never);
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
      const journal = readJournal(store, r2.run_id!);
      if (journal.length < 2) throw new CheckFailure(`the run journaled ${journal.length} calls, expected 2`);
      await rawDatabases(store).journal.put([r2.run_id!, 1], { ...journal[1]!, result: { unix_ms: 1, unix_s: 0 } } as never);
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
