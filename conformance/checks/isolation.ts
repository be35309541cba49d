// Conformance checks: isolation. Nothing a call leaves behind may reach another call: not its
// memory, globals, table edits, dropped segments or Extism variables (the next call of the same
// tool, recycled instance or fresh), not what concurrent calls hold, not another tool's keys, and
// not a run's output before (or unless) that run ends well.
import { expect, expectOutcome, expectSuccess, type Check, type CheckContext, type EngineAdapter, type PackSpec } from '../check.js';
import { EXTISM_ECHO } from '../kit/canary.js';
import { EMIT, KERNEL } from '../kit/extism-wat.js';
import { echoModule, numberResultModule } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

const SECRET_SLOT = 60_000;

/**
 * helix/v1: reports what it finds of an earlier call (bit 1: the secret slot is not zero, bit 2: a
 * mutable global is set, bit 4: memory is not its initial page) and the input pointer `alloc`
 * gave, as flags x 1,000,000 + pointer; then plants its own input in the slot and sets the global
 * (and, with `grow`, grows memory and writes in the new page).
 */
function plantModule(grow: boolean): string {
  return numberResultModule(
    `
    (if (i64.ne (i64.load (i32.const ${SECRET_SLOT})) (i64.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 1)))))
    (if (i32.ne (global.get $g) (i32.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 2)))))
    (if (i32.ne (memory.size) (i32.const 1)) (then (local.set $f (i32.or (local.get $f) (i32.const 4)))))
    (memory.copy (i32.const ${SECRET_SLOT}) (local.get $ptr) (local.get $len))
    (global.set $g (i32.const 777))
    ${grow ? '(drop (memory.grow (i32.const 1))) (i32.store (i32.const 70000) (i32.const 0x5ec2e7))' : ''}
    (i64.add (i64.mul (i64.extend_i32_u (local.get $f)) (i64.const 1000000)) (i64.extend_i32_u (local.get $ptr)))`,
    { locals: '(local $f i32)', extra: '(global $g (mut i32) (i32.const 0))' },
  );
}

/**
 * extism/v1: the same, plus an Extism variable (bit 8 when `k` is set); answers {"v":<flags>}
 * and plants a secret in memory, a global and the variable `k`.
 */
const EXTISM_PLANT = `(module ${KERNEL}
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (data (i32.const 0) "{\\"v\\":0}")
  (data (i32.const 100) "k")
  (data (i32.const 104) "secret")
  ${EMIT}
  (func (export "run") (result i32)
    (local $f i32)
    (if (i64.ne (i64.load (i32.const ${SECRET_SLOT})) (i64.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 1)))))
    (if (i32.ne (global.get $g) (i32.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 2)))))
    (if (i64.ne (call $var_get (call $emit (i32.const 100) (i32.const 1))) (i64.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 8)))))
    (i64.store (i32.const ${SECRET_SLOT}) (i64.add (call $input_length) (i64.const 0x5ec2e70000)))
    (global.set $g (i32.const 777))
    (call $var_set (call $emit (i32.const 100) (i32.const 1)) (call $emit (i32.const 104) (i32.const 6)))
    (i32.store8 (i32.const 5) (i32.add (i32.const 48) (local.get $f)))
    (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
    (i32.const 0)))`;

/** What a plant call found of earlier calls: its flags (0 when nothing). */
function found(engine: EngineAdapter, output: Record<string, unknown>): { flags: number; ptr?: number } {
  if (engine.name === 'extism') return { flags: Number(output.v) };
  const v = Number(output.value);
  return { flags: Math.floor(v / 1_000_000), ptr: v % 1_000_000 };
}

function describeFlags(flags: number): string {
  const seen = [
    flags & 1 ? 'the secret in memory' : '',
    flags & 2 ? 'the global' : '',
    flags & 4 ? 'grown memory' : '',
    flags & 8 ? 'the Extism variable' : '',
  ].filter((s) => s !== '');
  return seen.length === 0 ? 'nothing' : seen.join(', ');
}

const plantPack = (engine: EngineAdapter, id: string, grow = false): PackSpec =>
  engine.name === 'extism'
    ? { id, module: EXTISM_PLANT, manifest: { abi: 'extism/v1', entrypoint: 'run' } }
    : { id, module: plantModule(grow), manifest: { limits: { ...DEFAULT_LIMITS } } };

/** The script guest (conformance/assembly/script.ts) with `allow`. */
const scriptPack = (id: string, allow: readonly string[], manifest: Record<string, unknown> = {}): PackSpec => ({
  id,
  guest: 'script.ts',
  module: new Uint8Array(),
  manifest: { capabilities: { abiVersion: 1, allow }, ...manifest },
});

const cap = (name: string, args: Record<string, unknown>): { name: string; args: Record<string, unknown> } => ({ name, args });

/** The results of a script call's capability calls, in order. */
function answers(r: Awaited<ReturnType<CheckContext['call']>>): Array<Record<string, unknown>> {
  const out = expectSuccess(r) as {
    answers?: Array<{ status: string; capability_result?: { result: Record<string, unknown> }; error?: { code: string } }>;
  };
  return (out.answers ?? []).map((a) => {
    expect(a.status === 'ok', `a capability call was refused: ${JSON.stringify(a)}`);
    return a.capability_result!.result;
  });
}

export const isolationChecks: readonly Check[] = [
  {
    id: 'isolation.memory-and-globals-between-calls',
    title: 'A secret planted in memory, a global (and an Extism variable) by one call is gone in the next call of the same tool',
    category: 'isolation',
    abi: ['ABI-CALL-001', 'ABI-EXTISM-006'],
    engines: ['helix', 'extism'],
    expected:
      'each of 8 calls (each planting its own input in memory at 60,000, setting a mutable global, an Extism variable on extism, and growing memory on the second helix tool) finds nothing of the call before: flags 0, alloc giving the same input pointer every time',
    packs: (engine) =>
      engine.name === 'extism'
        ? [plantPack(engine, 'iso.plant')]
        : [plantPack(engine, 'iso.plant'), plantPack(engine, 'iso.plant_grow', true)],
    async run(ctx) {
      const tools = ctx.engine.name === 'extism' ? ['iso.plant'] : ['iso.plant', 'iso.plant_grow'];
      for (const tool of tools) {
        const seen: Array<{ flags: number; ptr?: number }> = [];
        for (let i = 0; i < 8; i++) {
          const r = await ctx.call(tool, { secret: `SECRET-${tool}-${i}-${'s'.repeat(i)}` });
          const f = found(ctx.engine, expectSuccess(r));
          seen.push(f);
          expect(f.flags === 0, `${tool} call ${i + 1} found ${describeFlags(f.flags)} of the call before`);
        }
        ctx.observe(tool, seen);
        if (ctx.engine.name === 'helix')
          expect(
            new Set(seen.map((s) => s.ptr)).size === 1,
            `${tool}: alloc gave different input pointers across calls: ${seen.map((s) => s.ptr).join(', ')}`,
          );
      }
      const stats = await (await ctx.host()).engineStats();
      ctx.observe('engine_stats', stats);
    },
  },
  {
    id: 'isolation.table-edit-between-calls',
    title: 'A call that rewires a table entry to its own function does not leave it rewired for the next call',
    category: 'isolation',
    abi: ['ABI-CALL-001'],
    engines: ['helix'],
    expected:
      'each of 5 calls reads table slot 0 through call_indirect (0 from the original function) before setting it to a function answering 42: every call answers 0',
    packs: () => [
      {
        id: 'iso.table',
        module: numberResultModule('(call_indirect (type $ret) (i32.const 0)) (table.set $t (i32.const 0) (ref.func $evil))', {
          extra:
            '(type $ret (func (result i64))) (table $t 1 funcref) (elem (i32.const 0) func $zero) (elem declare func $evil) (func $zero (result i64) (i64.const 0)) (func $evil (result i64) (i64.const 42))',
        }),
      },
    ],
    async run(ctx) {
      const values: unknown[] = [];
      for (let i = 0; i < 5; i++) {
        const out = expectSuccess(await ctx.call('iso.table', { i }));
        values.push(out.value);
        expect(out.value === 0, `call ${i + 1} found the table entry the call before set (answered ${String(out.value)})`);
      }
      ctx.observe('values', values);
    },
  },
  {
    id: 'isolation.data-drop-between-calls',
    title: 'A call that drops its passive data segment does not leave it dropped for the next call',
    category: 'isolation',
    abi: ['ABI-CALL-001'],
    engines: ['helix'],
    expected:
      'each of 5 calls copies the segment with memory.init then data.drop; every call succeeds and reads "S" (83), never a trap from a segment an earlier call dropped',
    packs: () => [
      {
        id: 'iso.segment',
        module: numberResultModule(
          '(memory.init $seg (i32.const 50000) (i32.const 0) (i32.const 14)) (data.drop $seg) (i64.load8_u (i32.const 50000))',
          {
            extra: '(data $seg "SECRET-SEGMENT")',
          },
        ),
      },
    ],
    async run(ctx) {
      for (let i = 0; i < 5; i++) {
        const out = expectSuccess(await ctx.call('iso.segment', { i }));
        expect(out.value === 83, `call ${i + 1} answered ${String(out.value)}, not 83`);
      }
    },
  },
  {
    id: 'isolation.concurrent-calls',
    title: '24 concurrent calls, each with its own secret, see nothing of each other and get their own answers',
    category: 'isolation',
    abi: ['ABI-CALL-001'],
    engines: ['helix', 'extism'],
    expected:
      '24 plant calls and 24 echo calls in flight together: every plant call finds nothing (flags 0), every echo answers exactly its own input',
    packs: (engine) => [
      plantPack(engine, 'iso.plant'),
      engine.name === 'extism'
        ? { id: 'iso.echo', module: EXTISM_ECHO, manifest: { abi: 'extism/v1', entrypoint: 'run' } }
        : { id: 'iso.echo', module: echoModule() },
    ],
    async run(ctx) {
      const n = 24;
      const plants = Array.from({ length: n }, (_, i) => ctx.call('iso.plant', { secret: `CONCURRENT-${i}-${'x'.repeat(i)}` }));
      const echoes = Array.from({ length: n }, (_, i) => ctx.call('iso.echo', { secret: `ECHO-${i}`, pad: 'e'.repeat(i * 7) }));
      const [p, e] = await Promise.all([Promise.all(plants), Promise.all(echoes)]);
      const flags = p.map((r) => found(ctx.engine, expectSuccess(r)).flags);
      ctx.observe('plant_flags', flags);
      flags.forEach((f, i) => expect(f === 0, `concurrent plant call ${i} found ${describeFlags(f)}`));
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
