// io checks of the Extism kernel under a hostile plugin: wrong lengths, missing blocks, a filled
// kernel memory, each ending as it ends on @extism/extism itself (ABI-EXTISM-011).
import { loadExtism } from '../../../host/5-host/inspection.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import { EMIT, extismWat, KERNEL } from '../../kit/extism-wat.js';
import { watString } from '../../kit/guest-wat.js';
import { FILLING_PLUGIN, KERNEL_ERROR_CAUGHT, KERNEL_ERROR_UNCAUGHT } from '../../kit/io-guests.js';
import { expectGuestFault, IO_LIMITS, ioPack } from '../../kit/io-support.js';
import { wat2wasm } from '../../kit/wat.js';

/** Extra kernel imports of the hostile kernel plugins. */
const MORE_KERNEL = `
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))`;

/** extism/v1 plugins misusing the Extism kernel, each with `run`; the data at 0 is {"a":1}. */
const KERNEL_ABUSE: Record<string, string> = {
  short_len: '(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 3)) (i32.const 0)',
  long_len: '(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 4000)) (i32.const 0)',
  load_u8_nothing:
    '(i32.store8 (i32.const 5) (i32.add (i32.const 48) (call $load_u8 (i64.const 0x0123000000000000)))) (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7)) (i32.const 0)',
  load_u64_nothing: '(drop (call $load_u64 (i64.const 0x0123000000000000))) (i32.const 0)',
  store_past_end:
    '(local $b i64) (local.set $b (call $emit (i32.const 0) (i32.const 7))) (call $store_u8 (i64.add (local.get $b) (i64.const 7)) (i32.const 65)) (call $output_set (local.get $b) (i64.const 7)) (i32.const 0)',
  error_then_free:
    '(local $b i64) (local.set $b (call $emit (i32.const 0) (i32.const 7))) (call $error_set (local.get $b)) (call $free (local.get $b)) (i32.const 0)',
  set_missing_block: '(call $output_set (i64.const 0x7fff000000000000) (i64.const 1)) (i32.const 0)',
  output_then_error:
    '(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7)) (call $error_set (call $emit (i32.const 0) (i32.const 7))) (i32.const 1)',
};
const kernelAbuse = (body: string): string => `(module ${KERNEL} ${MORE_KERNEL}
  (import "extism:host/user" "helix_capability_call" (func $cap (param i64) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\\"a\\":1}")
  ${EMIT}
  (func (export "run") (result i32) ${body}))`;

/** How @extism/extism 2.0.0-rc13 in worker mode, configured as Helix configures it, ends one call of `bytes`. */
async function referenceCall(
  bytes: Uint8Array,
  input: Uint8Array,
  pages: number,
): Promise<{ kind: 'output'; bytes: Uint8Array | null } | { kind: 'plugin-error'; text: string } | { kind: 'failure'; message: string }> {
  const createPlugin = await loadExtism();
  const plugin = await createPlugin({ wasm: [{ data: bytes }] }, {
    runInWorker: true,
    useWasi: false,
    logLevel: 'silent',
    functions: {
      'extism:host/user': {
        helix_capability_call: () => {
          throw new Error('no capabilities here');
        },
      },
    },
    memory: { maxPages: pages, maxVarBytes: pages * 65_536, maxHttpResponseBytes: 0 },
    allowedHosts: [],
    timeoutMs: null,
    sharedArrayBufferSize: 1 << 20,
  } as never);
  try {
    const out = await plugin.call('run', input);
    return { kind: 'output', bytes: out === null ? null : out.bytes().slice() };
  } catch (err) {
    const message = err instanceof Error ? err.message : String((err as { message?: unknown }).message ?? err);
    const prefix = 'Plugin-originated error: ';
    return message.startsWith(prefix) ? { kind: 'plugin-error', text: message.slice(prefix.length) } : { kind: 'failure', message };
  } finally {
    await plugin.close();
  }
}

/** The checks of this file, in the report's order. */
export const extismKernelChecks: readonly Check[] = [
  {
    id: 'io.extism-kernel',
    title: 'The Extism kernel as a hostile plugin uses it: wrong lengths, missing blocks, filling its memory',
    category: 'io',
    abi: ['ABI-EXTISM-011', 'ABI-EXTISM-009'],
    engines: ['extism'],
    expected:
      'output_set with a shorter length outputs the whole block; output_set past the block is S-TOOL-TRAP "length longer than target block"; a load from no block reads 0 as an i32; a kernel error caught by the plugin is not a decision (success); uncaught it is S-TOOL-TRAP with the kernel message in details.trap; filling the kernel memory makes alloc return 0 at the cap, so the plugin goes on and ends without output (S-TOOL-OUTPUT-JSON, never S-TOOL-WORKER-LOST)',
    packs: (engine) => [
      // The block holds {"a":1} (7 bytes); output_set is told 3.
      ioPack(
        engine,
        'io.short_len',
        extismWat('(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 3)) (i32.const 0)', {
          data: watString('{"a":1}'),
        }),
      ),
      ioPack(
        engine,
        'io.long_len',
        extismWat('(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 4000)) (i32.const 0)', {
          data: watString('{"a":1}'),
        }),
      ),
      ioPack(
        engine,
        'io.load_nothing',
        `(module ${KERNEL}
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\\"v\\":0}")
  ${EMIT}
  (func (export "run") (result i32)
    (i32.store8 (i32.const 5) (i32.add (i32.const 48) (call $load_u8 (i64.const 0x0123000000000000))))
    (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
    (i32.const 0)))`,
      ),
      ioPack(engine, 'io.kernel_caught', KERNEL_ERROR_CAUGHT),
      ioPack(engine, 'io.kernel_uncaught', KERNEL_ERROR_UNCAUGHT),
      ioPack(engine, 'io.fill', FILLING_PLUGIN, { limits: { ...IO_LIMITS, maxMemoryPages: 16 } }),
    ],
    async run(ctx) {
      const short = expectSuccess(await ctx.call('io.short_len', {}));
      expect(JSON.stringify(short) === '{"a":1}', `output_set with a shorter length gave ${JSON.stringify(short)}`);
      const long = await ctx.call('io.long_len', {});
      await expectGuestFault(ctx, long, 'S-TOOL-TRAP', { trap: 'length longer than target block' });
      ctx.observe('long_len', long.error);
      const loaded = expectSuccess(await ctx.call('io.load_nothing', {}));
      expect(JSON.stringify(loaded) === '{"v":0}', `a load from no block read ${JSON.stringify(loaded)}`);
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.kernel_caught', {}))) === '{}',
        'the caught kernel error did not let the plugin go on',
      );
      const uncaught = await ctx.call('io.kernel_uncaught', {});
      await expectGuestFault(ctx, uncaught, 'S-TOOL-TRAP');
      expect(
        typeof uncaught.error!.details.trap === 'string' && String(uncaught.error!.details.trap).length > 0,
        `no kernel message in details.trap: ${JSON.stringify(uncaught.error!.details)}`,
      );
      ctx.observe('kernel_trap', uncaught.error!.details.trap);
      const fill = await ctx.call('io.fill', {});
      // The plugin leaves its loop only when alloc answers 0, and then returns without an output: no output is not JSON.
      await expectGuestFault(ctx, fill, 'S-TOOL-OUTPUT-JSON');
      ctx.observe('fill', fill.error);
    },
  },
  {
    id: 'io.extism-kernel-as-reference',
    title: 'Plugins misusing the Extism kernel end on Helix as they end on @extism/extism itself',
    category: 'io',
    abi: ['ABI-EXTISM-011', 'ABI-EXTISM-007', 'ABI-EXTISM-008'],
    engines: ['extism'],
    expected: `for each of ${Object.keys(KERNEL_ABUSE).join(', ')}: the reference's output is Helix's success (or S-TOOL-OUTPUT-JSON when it is no JSON), its kernel failure is Helix's S-TOOL-TRAP with the same message in details.trap, its plugin error Helix's S-TOOL-EXTISM-ERROR or the tool's own error`,
    packs: (engine) => Object.entries(KERNEL_ABUSE).map(([name, body]) => ioPack(engine, `io.k_${name}`, kernelAbuse(body))),
    async run(ctx) {
      const seen: Record<string, string> = {};
      for (const [name, body] of Object.entries(KERNEL_ABUSE)) {
        const bytes = await wat2wasm(kernelAbuse(body), `${name}.wat`);
        const ref = await referenceCall(bytes, new TextEncoder().encode('{}'), IO_LIMITS.maxMemoryPages);
        const r = await ctx.call(`io.k_${name}`, {});
        const where = `${name}: the reference gave ${JSON.stringify(ref.kind === 'output' ? { output: ref.bytes === null ? null : new TextDecoder().decode(ref.bytes) } : ref)}, Helix ${r.status} ${r.error?.code ?? JSON.stringify(r.output)}`;
        if (ref.kind === 'failure') {
          expect(r.error?.code === 'S-TOOL-TRAP' && r.error.details.trap === ref.message, where);
        } else if (ref.kind === 'plugin-error') {
          let parsed: unknown;
          try {
            parsed = JSON.parse(ref.text);
          } catch {
            parsed = undefined;
          }
          if (typeof parsed === 'object' && parsed !== null && 'code' in parsed)
            expect(r.error?.code === (parsed as { code: string }).code, where);
          else expect(r.error?.code === 'S-TOOL-EXTISM-ERROR' && r.error.details.plugin_error === ref.text, where);
        } else {
          let json: unknown;
          let isJson = true;
          try {
            json = JSON.parse(new TextDecoder().decode(ref.bytes ?? new Uint8Array(0)));
          } catch {
            isJson = false;
          }
          if (isJson) expect(r.status === 'success' && JSON.stringify(r.output) === JSON.stringify(json), where);
          else expect(r.error?.code === 'S-TOOL-OUTPUT-JSON', where);
        }
        seen[name] =
          `${ref.kind === 'failure' ? `kernel failure "${ref.message}"` : ref.kind} -> ${r.status}${r.error === undefined ? '' : ` ${r.error.code}`}`;
      }
      ctx.observe('outcomes', seen);
    },
  },
];
