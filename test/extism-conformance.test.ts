// The engine's Extism kernel against the reference, @extism/extism 2.0.0-rc13 in worker mode,
// configured as Helix configured it when it ran plugins on it: the same plugins (the benchmark's
// echo and the bundled fasta.headers, built with @extism/as-pdk, and a WAT plugin that uses the
// kernel functions directly) with the same input and the same broker give the same output, the
// same error set by the plugin, or the same kernel failure (ABI-EXTISM-011).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXTISM_CAPABILITY_CALL, EXTISM_USER_MODULE, type EffectiveLimits } from '../abi/index.js';
import { createExtismEngine, loadExtism } from '../host/2-sandbox/engine/extism.js';
import type { CapabilityBroker, ExecuteResult } from '../host/2-sandbox/engine/protocol.js';
import type { EngineModule } from '../host/2-sandbox/engine/runner.js';
import { packageRoot } from '../host/1-base/paths.js';
import { instrumentModule } from '../host/2-sandbox/wasm/index.js';
import { KERNEL_PLUGIN, KERNEL_ENTRIES } from './helpers/extism-kernel-wat.js';
import { wat2wasm } from './helpers/wat.js';

const PAGES = 64;
const limits: EffectiveLimits = {
  fuel: 2_000_000_000,
  maxMemoryPages: PAGES,
  timeoutMs: 60_000,
  maxInputBytes: 4 << 20,
  maxOutputBytes: 4 << 20,
  maxCapabilityCalls: 1000,
};
const engine = createExtismEngine({ maxThreads: 1, maxQueue: 10 });
afterAll(() => engine.close());
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How the reference ended a call. */
type Outcome = { kind: 'output'; bytes: Uint8Array | null } | { kind: 'plugin-error'; text: string } | { kind: 'failure'; message: string };

/** One call on a new reference plugin, made as Helix made its plugins (worker mode, no WASI, no hosts, caps). */
async function reference(bytes: Uint8Array, entry: string, input: Uint8Array, broker: CapabilityBroker): Promise<Outcome> {
  const createPlugin = await loadExtism();
  const capabilityCall = async (
    ctx: { read(o: bigint): { bytes(): Uint8Array } | null; store(b: Uint8Array): bigint },
    offset: bigint,
  ): Promise<bigint> => {
    const answer = await broker(ctx.read(offset)!.bytes().slice());
    if (answer.kind !== 'answer') throw new Error(answer.message);
    return ctx.store(answer.response);
  };
  const plugin = await createPlugin(
    { wasm: [{ data: bytes }] },
    {
      runInWorker: true,
      useWasi: false,
      logLevel: 'silent',
      functions: { [EXTISM_USER_MODULE]: { [EXTISM_CAPABILITY_CALL]: capabilityCall } },
      memory: { maxPages: PAGES, maxVarBytes: PAGES * 65_536, maxHttpResponseBytes: 0 },
      allowedHosts: [],
      timeoutMs: null,
      sharedArrayBufferSize: 1 << 20,
    },
  );
  try {
    const out = await plugin.call(entry, input);
    return { kind: 'output', bytes: out === null ? null : out.bytes().slice() };
  } catch (err) {
    const message = err instanceof Error ? err.message : String((err as { message?: unknown }).message ?? err);
    const prefix = 'Plugin-originated error: ';
    return message.startsWith(prefix) ? { kind: 'plugin-error', text: message.slice(prefix.length) } : { kind: 'failure', message };
  } finally {
    await plugin.close();
  }
}

/** The plugin as the loader would hand it to the engine, its entry set to `entry`. */
function engineModuleOf(bytes: Uint8Array, entry: string): EngineModule {
  const instrumented = instrumentModule(bytes, { maxMemoryPages: PAGES });
  const digest = createHash('sha256').update(bytes).digest('hex');
  return {
    digest,
    abi: 'extism/v1',
    entrypoint: entry,
    bytes,
    instrumented,
    compiled: new WebAssembly.Module(instrumented.bytes),
    cap: PAGES,
  };
}

/** Asserts that Helix's result is what the reference's outcome means under ABI-EXTISM-007/-008. */
function expectSame(ref: Outcome, helix: ExecuteResult, what: string): void {
  if (ref.kind === 'failure') {
    expect(helix, what).toMatchObject({ kind: 'fault', code: 'S-TOOL-TRAP', details: { trap: ref.message } });
    return;
  }
  if (ref.kind === 'plugin-error') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(ref.text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed === 'object' && parsed !== null && 'code' in parsed)
      expect(helix, what).toMatchObject({ kind: 'output', output: { status: 'error', error: parsed } });
    else expect(helix, what).toMatchObject({ kind: 'fault', code: 'S-TOOL-EXTISM-ERROR', details: { plugin_error: ref.text } });
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(ref.bytes ?? new Uint8Array(0)));
  } catch {
    expect(helix, what).toMatchObject({ kind: 'fault', code: 'S-TOOL-OUTPUT-JSON' });
    if (helix.kind === 'fault') expect(helix.details.preview, what).toBe(decoder.decode((ref.bytes ?? new Uint8Array(0)).subarray(0, 200)));
    return;
  }
  expect(helix, what).toMatchObject({ kind: 'output', output: { status: 'ok', output: json } });
}

/** Runs `entry` of `bytes` on both runners, twice on Helix's (a new instance, then a restored one). */
async function conform(bytes: Uint8Array, entry: string, input: unknown, broker: CapabilityBroker = refuse): Promise<void> {
  const inputBytes = typeof input === 'string' ? encoder.encode(input) : encoder.encode(JSON.stringify(input));
  const ref = await reference(bytes, entry, inputBytes, broker);
  const module = engineModuleOf(bytes, entry);
  for (let i = 0; i < 2; i++) {
    const helix = await engine.execute({ module, input: inputBytes, limits, broker });
    expectSame(ref, helix, `${entry}, call ${i + 1}`);
  }
}

const refuse: CapabilityBroker = async () => ({
  kind: 'answer',
  response: encoder.encode('{"abi_version":1,"status":"error","error":{"code":"A-AUTH-FORBIDDEN","message":"no capabilities here"}}'),
  fuel: 0,
});

/** Serves artifact.stat and artifact.read of one text, in the envelope shapes the guest SDK reads. */
function artifactBroker(text: string): CapabilityBroker {
  const bytes = encoder.encode(text);
  return async (request) => {
    const { name, args } = JSON.parse(decoder.decode(request)) as { name: string; args: { offset?: number; length?: number } };
    const ok = (result: unknown) => ({
      kind: 'answer' as const,
      response: encoder.encode(JSON.stringify({ abi_version: 1, status: 'ok', capability_result: { result } })),
      fuel: 100,
    });
    if (name === 'artifact.stat') return ok({ compression: 'none', size: bytes.length });
    const end = Math.min(bytes.length, args.offset! + args.length!);
    return ok({ data: decoder.decode(bytes.subarray(args.offset!, end)), eof: end >= bytes.length, next_offset: end });
  };
}

describe("the engine's Extism kernel conforms to @extism/extism (ABI-EXTISM-011)", () => {
  it("runs the benchmark's echo (@extism/as-pdk) alike, small and large inputs", async () => {
    const echo = readFileSync(path.join(packageRoot(), 'bench', 'fixtures', 'echo-extism', 'build', 'echo-extism.wasm'));
    await conform(echo, 'echo', { sequence: 'GATTACA'.repeat(8), n: 42 });
    await conform(echo, 'echo', { big: 'ACGT'.repeat(300_000), list: Array.from({ length: 5000 }, (_, i) => i) });
    await conform(echo, 'echo', 'not json at all');
  }, 120_000);

  it('runs the bundled fasta.headers (@extism/as-pdk, capability calls) alike', async () => {
    const fasta = readFileSync(path.join(packageRoot(), 'plugins', 'fasta-headers', 'build', 'fasta-headers.wasm'));
    const records = Array.from({ length: 3000 }, (_, r) => `>seq${r} sample ${r % 7}\n${'ACGTN'.repeat(20 + (r % 50))}\n`).join('');
    await conform(fasta, 'headers', { fasta: 'a1', max_headers: 5 }, artifactBroker(records));
    await conform(fasta, 'headers', { fasta: 'a1' }, artifactBroker('not fasta\n'));
    await conform(fasta, 'headers', { max_headers: 5 }, artifactBroker(records));
    await conform(fasta, 'headers', { fasta: 'a1' });
  }, 120_000);

  it.each(KERNEL_ENTRIES)(
    "runs the kernel plugin's %s alike",
    async (entry) => {
      const bytes = await wat2wasm(KERNEL_PLUGIN);
      await conform(bytes, entry, { text: 'héllo', n: [1, 2, 3] });
    },
    60_000,
  );
});
