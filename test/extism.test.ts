// Extism plugins (abi: extism/v1) end to end: the bundled fasta.headers (built with
// @extism/as-pdk) and WAT plugins run on the engine's lanes with its Extism kernel, through the
// real host, broker, LMDB store and loader; their limits, errors, journal and verify are checked
// against what helix/v1 tools get.
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicySchema, ResponseEnvelopeSchema, type EffectiveLimits, type ResponseEnvelope } from '../abi/index.js';
import { importInline } from '../host/4-calls/artifacts/index.js';
import type { EngineModule } from '../host/2-sandbox/engine/engine.js';
import { engineModule } from '../host/4-calls/tools/wasm-tool.js';
import { createExtismEngine, type ExtismEngine } from '../host/2-sandbox/engine/extism.js';
import type { CapabilityBroker, ExecuteResult } from '../host/2-sandbox/engine/protocol.js';
import { readJournal } from '../host/4-calls/broker/journal.js';
import { runFixtures } from '../host/6-faces/devloop/run-fixtures.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost, type Host } from '../host/index.js';
import { loadToolpacks, type LoadedTool } from '../host/4-calls/loader/load-toolpacks.js';
import { formatViolation } from '../host/1-base/files/violation.js';
import { verifyRun } from '../host/4-calls/runs/verify.js';
import type { WasmTool } from '../host/4-calls/tools/wasm-tool.js';
import { packageRoot } from '../host/1-base/paths.js';
import { compileGuest } from './helpers/as-guest.js';
import { EXTISM_COUNTER, extismWat } from './helpers/extism-wat.js';
import { extismForwarder } from '../conformance/kit/caps-kit.js';
import { toolpacksDir, tempDir, writeToolpack, type ToolpackSpec } from './helpers/toolpack.js';

const forwarder = extismForwarder;

const SPIN = extismWat('(loop $l (br $l)) (i32.const 0)');
// Grows memory a page at a time until growth fails, then traps, as an allocator would.
const GROW = extismWat('(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable');
const ERROR_TEXT = extismWat('(call $error_set (call $emit (i32.const 0) (i32.const 20))) (i32.const 1)', { data: 'the sky is falling!!' });
const RETURN_7 = extismWat('(i32.const 7)');
const COUNTER = EXTISM_COUNTER;
/** COUNTER with a start function that counts too, touching no host function: g is 2 every call. */
const COUNTER_START = COUNTER.replace(
  '(global $g (mut i32) (i32.const 0))',
  '(global $g (mut i32) (i32.const 0)) (start $init) (func $init (global.set $g (i32.add (global.get $g) (i32.const 1))))',
);
/** A start function that reads the input's length from the kernel; run outputs it as {"n":N}. */
const START_INPUT = extismWat(
  `
    (i32.store8 (i32.const 5) (i32.add (i32.const 48) (global.get $n)))
    (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
    (i32.const 0)`,
  {
    data: '{\\"n\\":0}',
    extra: '(global $n (mut i32) (i32.const 0)) (start $init) (func $init (global.set $n (i32.wrap_i64 (call $input_length))))',
  },
);
const NOT_JSON = extismWat('(call $output_set (call $emit (i32.const 0) (i32.const 5)) (i64.const 5)) (i32.const 0)', { data: 'hello' });

const limits = { maxInputBytes: 65_536, maxOutputBytes: 65_536, fuel: 100_000_000, maxMemoryPages: 16, maxCapabilityCalls: 10 };
const extism = (id: string, module: string, manifest: Record<string, unknown> = {}): ToolpackSpec => ({
  id,
  module,
  manifest: { abi: 'extism/v1', entrypoint: 'run', limits, ...manifest },
});

const home = tempDir('helix-home-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;

beforeAll(async () => {
  plugins = await toolpacksDir([
    extism('x.forward', forwarder(1), { capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'kv.get'] } }),
    extism('x.forward_twice', forwarder(2), {
      limits: { ...limits, maxCapabilityCalls: 1 },
      capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
    }),
    extism('x.spin', SPIN, { timeoutMs: 400, limits: { ...limits, fuel: 10_000_000_000 } }),
    extism('x.spin_fuel', SPIN, { limits: { ...limits, fuel: 1_000_000 } }),
    extism('x.grow', GROW, { limits: { ...limits, maxMemoryPages: 32 } }),
    extism('x.error_text', ERROR_TEXT),
    extism('x.return_7', RETURN_7),
    extism('x.not_json', NOT_JSON),
    extism('x.counter', COUNTER),
    extism('x.counter_start', COUNTER_START),
    extism('x.start_input', START_INPUT),
    extism('x.forward_spin', forwarder(1, '(loop $spin (br $spin))'), {
      timeoutMs: 60_000,
      limits: { ...limits, fuel: 10_000_000_000 },
      capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
    }),
    extism('x.spin_long', SPIN, { timeoutMs: 60_000, limits: { ...limits, fuel: 10_000_000_000 } }),
    // The same script guest as the broker tests, as helix/v1: the reference for refusals.
    {
      id: 'h.script',
      module: await compileGuest('script.ts'),
      manifest: { limits: { ...limits, maxMemoryPages: 64 }, capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'kv.get'] } },
    },
  ]);
  cpSync(path.join(packageRoot(), 'plugins', 'fasta-headers'), path.join(plugins.dir, 'fasta-headers'), { recursive: true });
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
}, 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

async function call(tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<ResponseEnvelope> {
  return ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input, ...extra }));
}

/** An independent reading of FASTA headers, to check the plugin against. */
function expectedHeaders(
  text: string,
  max: number,
): { headers: Array<{ id: string; description: string; length: number }>; records: number; truncated: boolean } {
  const records: Array<{ id: string; description: string; length: number }> = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.startsWith('>')) {
      const m = /^([^ \t]*)(.*)$/.exec(line.slice(1))!;
      records.push({ id: m[1]!, description: m[2]!.trim(), length: 0 });
    } else if (records.length > 0) records[records.length - 1]!.length += line.replace(/[ \t]/g, '').length;
  }
  return { headers: records.slice(0, max), records: records.length, truncated: records.length > max };
}

/** About 1.6 MB of FASTA: more than one artifact.read piece, with CRLF, lowercase and N runs. */
function bigFasta(): string {
  const lines: string[] = [];
  for (let r = 0; r < 2500; r++) {
    lines.push(`>seq${r} sample ${r % 7} len\t${r}`);
    const eol = r % 3 === 0 ? '\r' : '';
    for (let l = 0; l < 10; l++) lines.push(`${'ACGTNacgtn'.repeat(6).slice(0, 60 - (r % 5))}${eol}`);
  }
  return `${lines.join('\n')}\n`;
}

describe('an Extism plugin (fasta.headers, @extism/as-pdk)', () => {
  it('is called through host.call, reads its artifact through the broker, and its output is validated', async () => {
    const text = bigFasta();
    const art = await importInline(hostStore(host), text, { label: 'big' });
    const r = await call('fasta.headers', { fasta: art.id, max_headers: 3000 });
    expect(r.status).toBe('success');
    expect(r.output).toEqual(expectedHeaders(text, 3000));
    expect(r.metrics.fuel_used).toBeGreaterThan(0);
    expect(r.metrics.memory_peak_pages).toBeGreaterThan(0);
    expect(r.provenance.digest).toMatch(/^sha256:/);
    const journal = readJournal(hostStore(host), r.run_id!);
    const names = journal.map((e) => e.name);
    expect(names[0]).toBe('artifact.stat');
    expect(names.slice(1).every((n) => n === 'artifact.read')).toBe(true);
    // 1.6 MB in pieces of at most 1 MiB: at least two reads.
    expect(journal.length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('reads gzip artifacts decompressed, and a second identical call replays the run', async () => {
    const text = bigFasta()
      .slice(0, 200_000)
      .replace(/\n[^\n]*$/, '\n');
    const art = await importInline(hostStore(host), gzipSync(text), { label: 'gz' });
    const first = await call('fasta.headers', { fasta: art.id, max_headers: 5 });
    expect(first.status).toBe('success');
    expect(first.output).toEqual(expectedHeaders(text, 5));
    const second = await call('fasta.headers', { fasta: art.id, max_headers: 5 });
    expect(second.replayed).toBe(true);
    expect(second.run_id).toBe(first.run_id);
    expect(second.output).toEqual(first.output);
  }, 60_000);

  it('is reproduced by helix verify from its journal, fuel included', async () => {
    const art = await importInline(hostStore(host), '>a one\nACGT\n>b\nAC\n', { label: 'tiny' });
    const r = await call('fasta.headers', { fasta: art.id });
    expect(r.status).toBe('success');
    const report = await verifyRun(hostStore(host), r.run_id!);
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.match).toBe(true);
  }, 60_000);

  it('passes its own fixtures through the real host', async () => {
    const tool = host.tools().find((t) => t.id === 'fasta.headers') as WasmTool;
    const results = await runFixtures(host, tool);
    expect(results.length).toBe(4);
    expect(results.filter((f) => !f.ok)).toEqual([]);
  }, 60_000);
});

describe('the broker host function', () => {
  const request = (name: string, args: Record<string, unknown> = {}) => ({ abi_version: 1, name, args });

  it('answers a granted call and journals it', async () => {
    const r = await call('x.forward', request('clock.now_unix'));
    expect(r.status).toBe('success');
    expect(r.output).toMatchObject({
      status: 'ok',
      abi_version: 1,
      capability_result: { name: 'clock.now_unix', result: { unix_ms: expect.any(Number) } },
    });
    const journal = readJournal(hostStore(host), r.run_id!);
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ name: 'clock.now_unix', outcome: 'ok' });
    // Capability calls cost fuel (ABI-CAP-006): 1000 units and more on top of the guest's own.
    const plain = await call('x.return_7', {});
    expect(r.metrics.fuel_used).toBeGreaterThan(1000 + plain.metrics.fuel_used);
  });

  it('denies a capability the manifest does not allow with the same forbidden answer as helix/v1', async () => {
    const denied = await call('x.forward', request('kv.put', { key: 'k', value: 1 }));
    expect(denied.status).toBe('success');
    expect(denied.output).toMatchObject({ status: 'error', error: { code: 'A-AUTH-FORBIDDEN', message: 'forbidden' } });
    const helix = await call('h.script', { calls: [{ name: 'kv.put', args: { key: 'k', value: 1 } }] });
    expect((helix.output as { answers: unknown[] }).answers[0]).toEqual(denied.output);
    const unknown = await call('x.forward', request('no.such_thing'));
    expect(unknown.output).toEqual(denied.output);
  });

  it('answers a malformed request with I-REQ-ENVELOPE and lets the plugin go on', async () => {
    const r = await call('x.forward', { hello: 'world' });
    expect(r.status).toBe('success');
    expect(r.output).toMatchObject({ status: 'error', error: { code: 'I-REQ-ENVELOPE' } });
  });

  it('ends a run that makes more capability calls than maxCapabilityCalls with R-CAP-CALL-LIMIT', async () => {
    const r = await call('x.forward_twice', request('clock.now_unix'));
    expect(r.status).not.toBe('success');
    expect(r.error?.code).toBe('R-CAP-CALL-LIMIT');
  });
});

describe('limits on Extism plugins', () => {
  it('ends a run whose fuel runs out with S-TOOL-FUEL-EXHAUSTED', async () => {
    const r = await call('x.spin_fuel', {});
    expect(r.error?.code).toBe('S-TOOL-FUEL-EXHAUSTED');
    expect(r.error?.details).toMatchObject({ fuel_limit: 1_000_000 });
    expect(r.metrics.fuel_used).toBeGreaterThan(1_000_000);
  });

  it('stops a run past its deadline with R-TIMEOUT-001 and keeps serving', async () => {
    const r = await call('x.spin', {});
    expect(r.error?.code).toBe('R-TIMEOUT-001');
    expect(r.status).toBe('retryable_error');
    expect(r.error?.details).toMatchObject({ timeout_ms: 400, phase: 'run' });
    const after = await call('x.forward', { abi_version: 1, name: 'clock.now_unix', args: {} });
    expect(after.status).toBe('success');
  }, 30_000);

  it('caps linear memory at maxMemoryPages, and lower when the request asks for less', async () => {
    const r = await call('x.grow', {});
    expect(r.error?.code).toBe('S-TOOL-TRAP');
    expect(r.error?.details).toMatchObject({ memory_pages: 32, max_memory_pages: 32 });
    expect(r.metrics.memory_peak_pages).toBe(32);
    // 1 MiB is 16 pages: a variant of the plugin instrumented for that cap.
    const small = await call('x.grow', {}, { constraints: { memory_mb_limit: 1 } });
    expect(small.error?.details).toMatchObject({ memory_pages: 16, max_memory_pages: 16 });
  });
});

describe('Extism plugin errors', () => {
  it('maps a plain extism_error_set message to S-TOOL-EXTISM-ERROR carrying it', async () => {
    const r = await call('x.error_text', {});
    expect(r.error?.code).toBe('S-TOOL-EXTISM-ERROR');
    expect(r.error?.details).toMatchObject({ plugin_error: 'the sky is falling!!' });
  });

  it('treats a JSON taxonomy error set by the plugin as the tool error', async () => {
    const art = await importInline(hostStore(host), 'gene\tcount\nA\t1\n', { label: 'table' });
    const r = await call('fasta.headers', { fasta: art.id });
    expect(r.error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 1 } });
  });

  it('maps a non-zero return without an error to S-TOOL-EXTISM-ERROR with the code', async () => {
    const r = await call('x.return_7', {});
    expect(r.error?.code).toBe('S-TOOL-EXTISM-ERROR');
    expect(r.error?.details).toMatchObject({ return_code: 7 });
  });

  it('refuses output that is not JSON with S-TOOL-OUTPUT-JSON', async () => {
    const r = await call('x.not_json', {});
    expect(r.error?.code).toBe('S-TOOL-OUTPUT-JSON');
  });
});

describe('the loader on extism/v1 modules', () => {
  const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });

  async function refusals(module: string, manifest: Record<string, unknown> = {}): Promise<string[]> {
    const dir = tempDir();
    try {
      mkdirSync(dir.dir, { recursive: true });
      await writeToolpack(dir.dir, extism('bad.plugin', module, manifest));
      const result = await loadToolpacks(dir.dir, policy);
      expect(result.tools).toEqual([]);
      return result.violations.map(formatViolation);
    } finally {
      dir.cleanup();
    }
  }

  it('refuses the kernel http functions, other imports, and a mistyped host function', async () => {
    const lines = await refusals(`(module
      (import "extism:host/env" "http_request" (func (param i64 i64) (result i64)))
      (import "env" "abort" (func (param i32 i32 i32 i32)))
      (import "extism:host/user" "helix_capability_call" (func (param i32) (result i32)))
      (import "extism:host/env" "alloc" (global i64))
      (memory (export "memory") 1)
      (func (export "run") (result i32) (i32.const 0)))`);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /bad_plugin\.tool\.yaml:\d+: module: ABI-EXTISM-002: import extism:host\/env\.http_request .*through the broker/,
    );
    expect(lines[1]).toMatch(/module: ABI-EXTISM-002: import env\.abort \(func\) is not allowed/);
    expect(lines[2]).toMatch(
      /module: ABI-EXTISM-002: extism:host\/user\.helix_capability_call must be imported as a function \(i64\) -> \(i64\)/,
    );
    expect(lines[3]).toMatch(/module: ABI-EXTISM-002: extism:host\/env\.alloc must be imported as a function/);
  });

  it('requires the entry function with () -> i32 and the memory export', async () => {
    const missing = await refusals('(module (func (export "run") (param i32) (result i32) (i32.const 0)))');
    expect(missing.some((l) => /: entrypoint: ABI-EXTISM-003: export "run" has signature \(i32\) -> \(i32\)/.test(l))).toBe(true);
    expect(missing.some((l) => /: module: ABI-EXTISM-001: the module must export its linear memory as "memory"/.test(l))).toBe(true);
    const absent = await refusals('(module (memory (export "memory") 1) (func (export "main") (result i32) (i32.const 0)))');
    expect(absent).toHaveLength(1);
    expect(absent[0]).toMatch(/: entrypoint: ABI-EXTISM-003: the module must export a function "run"/);
  });

  it('refuses exports Extism would run at instantiation, and memory64', async () => {
    const lines = await refusals(
      '(module (memory (export "memory") 1) (func (export "_initialize")) (func (export "run") (result i32) (i32.const 0)))',
    );
    expect(lines).toEqual([expect.stringMatching(/module: ABI-EXTISM-005: export "_initialize" is not allowed/)]);
    const wide = await refusals('(module (memory (export "memory") i64 1) (func (export "run") (result i32) (i32.const 0)))');
    expect(wide).toEqual([expect.stringMatching(/module: ABI-MEMORY-001: memory 0 is 64-bit/)]);
  });

  it('refuses a module that cannot be instantiated, before Extism ever sees it', async () => {
    // A data segment past the end of memory fails at instantiation, which in Extism's worker
    // would be an uncaught exception of the host.
    const lines = await refusals(
      '(module (memory (export "memory") 1) (data (i32.const 65535) "xy") (func (export "run") (result i32) (i32.const 0)))',
    );
    expect(lines).toEqual([expect.stringMatching(/module: ABI-EXTISM-001: the module cannot be instantiated: .*data segment/i)]);
  });

  it('loads the bundled fasta.headers', async () => {
    const dir = tempDir();
    try {
      cpSync(path.join(packageRoot(), 'plugins', 'fasta-headers'), path.join(dir.dir, 'fasta-headers'), { recursive: true });
      const result = await loadToolpacks(dir.dir, policy);
      expect(result.violations.map(formatViolation)).toEqual([]);
      expect(result.tools.map((t) => [t.manifest.id, t.manifest.abi])).toEqual([['fasta.headers', 'extism/v1']]);
    } finally {
      dir.cleanup();
    }
  });
});

describe('Extism plugins on the lanes: fresh state per call (ABI-EXTISM-006)', () => {
  const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });
  let tools: Map<string, LoadedTool>;
  let modules: Map<string, EngineModule>;
  const engines: ExtismEngine[] = [];
  beforeAll(async () => {
    const result = await loadToolpacks(plugins.dir, policy);
    tools = new Map(result.tools.map((t) => [t.manifest.id, t]));
    modules = new Map(
      await Promise.all(result.tools.map(async (t) => [t.manifest.id, engineModule(t, await t.module.prepare())] as const)),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });

  const newEngine = (options: { maxThreads?: number } = {}): ExtismEngine => {
    const engine = createExtismEngine({ maxThreads: options.maxThreads ?? 2, maxQueue: 100 });
    engines.push(engine);
    return engine;
  };
  const noCapabilities: CapabilityBroker = async () => ({
    kind: 'abort',
    code: 'A-AUTH-FORBIDDEN',
    message: 'no capabilities here',
    details: {},
  });
  /** One call of `id` on `engine`, as the host would make it, with `limits` overriding the tool's. */
  const exec = (
    engine: ExtismEngine,
    id: string,
    input: unknown = {},
    extra: { broker?: CapabilityBroker; limits?: Partial<EffectiveLimits> } = {},
  ) => {
    const tool = tools.get(id)!;
    return engine.execute({
      module: modules.get(id)!,
      input: new TextEncoder().encode(JSON.stringify(input)),
      limits: { ...tool.limits, ...extra.limits },
      broker: extra.broker ?? noCapabilities,
    });
  };
  const output = (r: ExecuteResult): unknown => {
    if (r.kind !== 'output') throw new Error(`expected output, got ${r.code}: ${r.message}`);
    return r.output;
  };

  it('restores the instance between calls: globals, memory and vars written by one call are unseen by the next', async () => {
    const engine = newEngine({ maxThreads: 1 });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await exec(engine, 'x.counter'));
    for (const r of results) expect(output(r)).toEqual({ status: 'ok', output: { g: 1, m: 1, v: 1 } });
    // The first call made the instance; the later ones ran on it, restored from its snapshot.
    expect(results.map((r) => r.recycled)).toEqual([false, true, true, true]);
  }, 60_000);

  it('charges the same fuel on a restored instance as on a new one, its start function included', async () => {
    const engine = newEngine({ maxThreads: 1 });
    for (const id of ['x.counter', 'x.counter_start']) {
      const fresh = await exec(engine, id);
      const restored = await exec(engine, id);
      expect([fresh.recycled, restored.recycled]).toEqual([false, true]);
      expect(fresh.fuelUsed).toBeGreaterThan(0);
      expect(restored.fuelUsed).toBe(fresh.fuelUsed);
      expect(restored.memoryPages).toBe(fresh.memoryPages);
      // The start function ran once per call's worth of state: its count is the same every call.
      expect(output(restored)).toEqual(output(fresh));
    }
    expect(output(await exec(engine, 'x.counter_start'))).toEqual({ status: 'ok', output: { g: 2, m: 1, v: 1 } });
  }, 60_000);

  it('never keeps an instance whose start function used the kernel: each call sees its own input', async () => {
    const engine = newEngine({ maxThreads: 1 });
    const inputs = [{}, { a: 1 }, {}, { ab: 12 }];
    for (const input of inputs) {
      const r = await exec(engine, 'x.start_input', input);
      expect(output(r)).toEqual({ status: 'ok', output: { n: JSON.stringify(input).length } });
      expect(r.recycled).toBe(false);
    }
  }, 60_000);

  it('binds the host function to the broker of the call it serves', async () => {
    const engine = newEngine({ maxThreads: 1 });
    const answering =
      (who: string): CapabilityBroker =>
      async () => ({ kind: 'answer', response: new TextEncoder().encode(JSON.stringify({ who })), fuel: 1000 });
    const request = { abi_version: 1, name: 'clock.now_unix', args: {} };
    expect(output(await exec(engine, 'x.forward', request, { broker: answering('first') }))).toEqual({
      status: 'ok',
      output: { who: 'first' },
    });
    const second = await exec(engine, 'x.forward', request, { broker: answering('second') });
    expect(output(second)).toEqual({ status: 'ok', output: { who: 'second' } });
    expect(second.recycled).toBe(true);
  }, 60_000);

  it('never gives one memory cap an instance made for another', async () => {
    const engine = newEngine({ maxThreads: 1 });
    expect(await exec(engine, 'x.grow')).toMatchObject({ code: 'S-TOOL-TRAP', details: { memory_pages: 32, max_memory_pages: 32 } });
    expect(await exec(engine, 'x.grow', {}, { limits: { maxMemoryPages: 16 } })).toMatchObject({
      code: 'S-TOOL-TRAP',
      details: { memory_pages: 16, max_memory_pages: 16 },
    });
    expect(await exec(engine, 'x.grow')).toMatchObject({ code: 'S-TOOL-TRAP', details: { memory_pages: 32, max_memory_pages: 32 } });
    const small = await exec(engine, 'x.counter', {}, { limits: { maxMemoryPages: 4 } });
    const own = await exec(engine, 'x.counter');
    expect([small.recycled, own.recycled]).toEqual([false, false]);
    expect(output(own)).toEqual({ status: 'ok', output: { g: 1, m: 1, v: 1 } });
  }, 60_000);

  it('stops a call at its deadline and keeps serving', async () => {
    const engine = newEngine();
    const stopped = await exec(engine, 'x.spin', {}, { limits: { timeoutMs: 200 } });
    expect(stopped).toMatchObject({ kind: 'fault', code: 'R-TIMEOUT-001', details: { timeout_ms: 200, phase: 'run' } });
    expect(output(await exec(engine, 'x.counter'))).toEqual({ status: 'ok', output: { g: 1, m: 1, v: 1 } });
  }, 60_000);

  it('ends a call in flight when the engine closes, with R-TIMEOUT-CANCELLED, not at its deadline', async () => {
    const request = { abi_version: 1, name: 'clock.now_unix', args: {} };
    let reached!: () => void;
    const inBroker = new Promise<void>((resolve) => (reached = resolve));
    // The broker never answers: the call is certainly in flight, inside its capability call.
    const hanging: CapabilityBroker = () => {
      reached();
      return new Promise(() => {});
    };
    const engine = newEngine();
    const pending = exec(engine, 'x.forward', request, { broker: hanging, limits: { timeoutMs: 600_000 } });
    await inBroker;
    await engine.close();
    expect(await pending).toMatchObject({ kind: 'fault', code: 'R-TIMEOUT-CANCELLED', details: { phase: 'run', reason: 'engine_closed' } });
    // A guest in an endless loop (after one answered capability call, so it has certainly started) is ended the same way.
    let answered!: () => void;
    const started = new Promise<void>((resolve) => (answered = resolve));
    const answering: CapabilityBroker = async () => {
      answered();
      return { kind: 'answer', response: new TextEncoder().encode('{}'), fuel: 0 };
    };
    const spinning = newEngine();
    const spin = exec(spinning, 'x.forward_spin', request, { broker: answering });
    await started;
    await spinning.close();
    expect(await spin).toMatchObject({ kind: 'fault', code: 'R-TIMEOUT-CANCELLED', details: { phase: 'run' } });
    expect(await exec(spinning, 'x.counter')).toMatchObject({
      kind: 'fault',
      code: 'S-TOOL-WORKER-LOST',
      message: 'The engine is closed.',
    });
  }, 60_000);
});
