// The metered engine end to end: real modules (compiled from WAT in the set-up), the real
// loader, real worker threads. Each test names the behaviour the sandbox promises.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { abiPrelude, echoModule, fixedOutputModule, numberResultModule, watString } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const LOOP_FOREVER = `(loop $l (br $l)) (i64.const 0)`;
/** Counts down from the input's byte length times 1000: fuel grows with input size. */
const BURN = `(local.set $v (i64.mul (i64.extend_i32_u (local.get $len)) (i64.const 1000)))
  (block $b (loop $l (br_if $b (i64.eqz (local.get $v))) (local.set $v (i64.sub (local.get $v) (i64.const 1))) (br $l)))
  (i64.extend_i32_u (local.get $len))`;
/** Grows memory a page at a time until refused; answers the page count reached. */
const GROW_PROBE = `(block $b (loop $l (br_if $b (i32.eq (memory.grow (i32.const 1)) (i32.const -1))) (br $l)))
  (i64.extend_i32_u (memory.size))`;
/** Increments a global and a memory cell and answers both summed: 2 on a fresh instance. */
const STATEFUL = `(global.set $count (i32.add (global.get $count) (i32.const 1)))
  (i32.store (i32.const 8) (i32.add (i32.load (i32.const 8)) (i32.const 1)))
  (i64.extend_i32_u (i32.add (global.get $count) (i32.load (i32.const 8))))`;
/** Calls capability_call with the name in the input and returns the host's answer as output. */
const CAPABILITY_PROBE = `(module
  (import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))
  ${abiPrelude()}
  (data (i32.const 16) "${watString('{"status":"ok","output":')}")
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $r i64) (local $rp i32) (local $rl i32) (local $out i32)
    ;; the input is a whole capability request: {"abi_version":1,"name":...,"args":{}}
    (local.set $r (call $cap (local.get $ptr) (local.get $len)))
    (local.set $rp (i32.wrap_i64 (i64.shr_u (local.get $r) (i64.const 32))))
    (local.set $rl (i32.wrap_i64 (local.get $r)))
    (local.set $out (call $alloc (i32.add (local.get $rl) (i32.const 25))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const 24))
    (memory.copy (i32.add (local.get $out) (i32.const 24)) (local.get $rp) (local.get $rl))
    (i32.store8 (i32.add (local.get $out) (i32.add (local.get $rl) (i32.const 24))) (i32.const 125))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32)) (i64.extend_i32_u (i32.add (local.get $rl) (i32.const 25))))))`;

const outputSchema = { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'], additionalProperties: false };

let host: Host;
let cleanup: () => void;
let plugins: string;
const homes: Array<{ dir: string; cleanup: () => void }> = [];
/** A fresh store: identical calls replay within one store, so execution tests vary inputs or stores. */
function newHome(): string {
  const h = tempDir('helix-home-');
  homes.push(h);
  return h.dir;
}

beforeAll(async () => {
  const p = await toolpacksDir([
    { id: 't.echo', module: echoModule() },
    {
      id: 't.loop',
      module: numberResultModule(LOOP_FOREVER),
      manifest: { timeoutMs: 300, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e15 } },
      outputSchema,
    },
    {
      id: 't.start_loop',
      module: fixedOutputModule('{"status":"ok","output":{}}', '(func $s (loop $l (br $l))) (start $s)'),
      manifest: { timeoutMs: 300, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e15 } },
    },
    {
      id: 't.burn',
      module: numberResultModule(BURN),
      manifest: { timeoutMs: 60_000, limits: { maxInputBytes: 100_000, maxOutputBytes: 1000, fuel: 200_000 } },
      outputSchema,
    },
    {
      id: 't.grow',
      module: numberResultModule(GROW_PROBE),
      manifest: { limits: { maxInputBytes: 1000, maxOutputBytes: 1000, maxMemoryPages: 5 } },
      outputSchema,
    },
    {
      id: 't.grow40',
      module: numberResultModule(GROW_PROBE),
      manifest: { limits: { maxInputBytes: 1000, maxOutputBytes: 1000, maxMemoryPages: 40 } },
      outputSchema,
    },
    {
      id: 't.big_start',
      module: numberResultModule('(i64.const 1)', { pages: 20 }),
      manifest: { limits: { maxInputBytes: 1000, maxOutputBytes: 1000, maxMemoryPages: 40 } },
      outputSchema,
    },
    { id: 't.state', module: numberResultModule(STATEFUL, { extra: '(global $count (mut i32) (i32.const 0))' }), outputSchema },
    { id: 't.trap', module: numberResultModule('(unreachable)'), outputSchema },
    {
      id: 't.divzero',
      module: numberResultModule('(i64.div_s (i64.const 1) (i64.extend_i32_u (i32.sub (local.get $len) (local.get $len))))'),
      outputSchema,
    },
    {
      id: 't.recurse',
      module: numberResultModule('(call $down (i64.const 0))', {
        extra: '(func $down (param $n i64) (result i64) (call $down (i64.add (local.get $n) (i64.const 1))))',
      }),
      outputSchema,
    },
    {
      id: 't.badptr',
      module: `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0x0000fff0_00100000)))`,
    },
    { id: 't.notjson', module: fixedOutputModule('this is not json') },
    { id: 't.badutf8', module: fixedOutputModule(new Uint8Array([0x22, 0xff, 0xfe, 0x22])) },
    { id: 't.badenvelope', module: fixedOutputModule('{"status":"done","result":1}') },
    {
      id: 't.big',
      module: fixedOutputModule(`{"status":"ok","output":{"pad":"${'x'.repeat(200)}"}}`),
      manifest: { limits: { maxInputBytes: 1000, maxOutputBytes: 100 } },
    },
    {
      id: 't.guesterr',
      module: fixedOutputModule('{"status":"error","error":{"code":"D-DATA-FORMAT","message":"line 3 is not FASTA","details":{"line":3}}}'),
    },
    { id: 't.wrongout', module: fixedOutputModule('{"status":"ok","output":{"value":"seven"}}'), outputSchema },
    {
      id: 't.terminalcap',
      module: fixedOutputModule('{"status":"capability_call","abi_version":1,"capability_call":{"name":"kv.get","args":{"key":"k"}}}'),
    },
    { id: 't.cap', module: CAPABILITY_PROBE, manifest: { limits: { maxInputBytes: 1000, maxOutputBytes: 1000, maxCapabilityCalls: 5 } } },
    {
      id: 't.strict',
      module: echoModule(),
      inputSchema: {
        type: 'object',
        properties: { n: { type: 'integer', minimum: 1 }, s: { type: 'string' } },
        required: ['n', 's'],
        additionalProperties: false,
      },
    },
  ]);
  cleanup = p.cleanup;
  plugins = p.dir;
  host = await createHost({ toolpacksDir: p.dir, policy: loadPolicy(undefined), home: newHome(), engine: { maxThreads: 2 } });
});

afterAll(async () => {
  await host?.close();
  cleanup?.();
  for (const h of homes) h.cleanup();
});

async function call(tool_id: string, input: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<ResponseEnvelope> {
  const r = await host.call({ tool_id, input, ...extra });
  // Every response is exactly one valid envelope, whatever happened.
  return ResponseEnvelopeSchema.parse(r);
}

describe('the engine', () => {
  it('passes JSON in and out and reports metrics and provenance on success', async () => {
    const r = await call('t.echo', { hello: 'world', n: [1, 2, 3] });
    expect(r.status).toBe('success');
    expect(r.output).toEqual({ hello: 'world', n: [1, 2, 3] });
    expect(r.metrics.fuel_used).toBeGreaterThan(0);
    expect(r.metrics.memory_peak_pages).toBe(1);
    expect(r.provenance).toMatchObject({ tool_id: 't.echo', tool_version: '1.0.0' });
    expect(r.provenance.digest).toMatch(/^sha256:/);
  });

  it('stops an endless loop at the deadline with R-TIMEOUT-001, and the pool keeps serving', async () => {
    const r = await call('t.loop', { x: 1 });
    expect(r.status).toBe('retryable_error');
    expect(r.error?.code).toBe('R-TIMEOUT-001');
    expect(r.error?.details).toMatchObject({ timeout_ms: 300 });
    expect(r.metrics.duration_ms).toBeGreaterThanOrEqual(290);
    const after = await Promise.all([call('t.echo', { a: 1 }), call('t.echo', { b: 2 }), call('t.echo', { c: 3 })]);
    expect(after.map((x) => x.status)).toEqual(['success', 'success', 'success']);
  });

  it('applies the smallest deadline of manifest and request', async () => {
    const r = await call('t.loop', {}, { constraints: { timeout_ms: 100 } });
    expect(r.error?.code).toBe('R-TIMEOUT-001');
    expect(r.error?.details).toMatchObject({ timeout_ms: 100 });
    const past = await call('t.echo', {}, { constraints: { deadline_unix_ms: Date.now() - 1000 } });
    expect(past.error).toMatchObject({ code: 'R-TIMEOUT-001', details: { phase: 'dispatch' } });
  });

  it('covers instantiation with the deadline: an endless start function times out', async () => {
    const r = await call('t.start_loop');
    expect(r.error?.code).toBe('R-TIMEOUT-001');
  });

  it('stops a CPU burn with a small fuel budget with the fuel error, well before the deadline', async () => {
    const small = await call('t.burn', { pad: 'x'.repeat(10) });
    expect(small.status).toBe('success');
    const r = await call('t.burn', { pad: 'x'.repeat(5000) });
    expect(r.status).toBe('terminal_error');
    expect(r.error?.code).toBe('S-TOOL-FUEL-EXHAUSTED');
    expect(r.error?.details).toMatchObject({ fuel_limit: 200_000 });
    expect(r.metrics.fuel_used).toBeGreaterThan(200_000);
    expect(r.metrics.duration_ms).toBeLessThan(60_000);
  });

  it('reports the same fuel_used for the same call, and more fuel for more work', async () => {
    const a = await call('t.burn', { pad: 'xx' });
    // The same call again in this store would replay; run it in a second host with its own store.
    const other = await createHost({ toolpacksDir: plugins, policy: loadPolicy(undefined), home: newHome(), engine: { maxThreads: 1 } });
    const b = ResponseEnvelopeSchema.parse(await other.call({ tool_id: 't.burn', input: { pad: 'xx' } }));
    await other.close();
    const c = await call('t.burn', { pad: 'xxxx' });
    expect([a.status, b.status, c.status]).toEqual(['success', 'success', 'success']);
    expect([a.replayed, b.replayed]).toEqual([false, false]);
    expect(a.metrics.fuel_used).toBeGreaterThan(0);
    expect(a.metrics.fuel_used).toBe(b.metrics.fuel_used);
    expect(c.metrics.fuel_used).toBeGreaterThan(a.metrics.fuel_used);
  });

  it('refuses memory growth past the cap inside the guest', async () => {
    const r = await call('t.grow');
    expect(r.status).toBe('success');
    expect(r.output).toEqual({ value: 5 });
    expect(r.metrics.memory_peak_pages).toBe(5);
  });

  it('lets a request narrow the memory cap, never widen it', async () => {
    // memory_mb_limit 1 = 16 pages: below the tool's 40, so the guest stops at 16.
    expect((await call('t.grow40', {}, { constraints: { memory_mb_limit: 1 } })).output).toEqual({ value: 16 });
    expect((await call('t.grow40', {}, { constraints: { memory_mb_limit: 100 } })).output).toEqual({ value: 40 });
    expect((await call('t.grow40')).output).toEqual({ value: 40 });
    const tooSmall = await call('t.big_start', {}, { constraints: { memory_mb_limit: 1 } });
    expect(tooSmall.status).toBe('invalid_request');
    expect(tooSmall.error?.details.violations).toEqual([expect.objectContaining({ path: '/constraints/memory_mb_limit' })]);
  });

  it('gives every call a fresh state: globals and memory do not survive', async () => {
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await call('t.state', { i }));
    expect(results.map((r) => r.replayed)).toEqual(Array(6).fill(false));
    expect(results.map((r) => r.output)).toEqual(Array(6).fill({ value: 2 }));
    const concurrent = await Promise.all(Array.from({ length: 20 }, (_, i) => call('t.state', { i: 100 + i })));
    expect(new Set(concurrent.map((r) => JSON.stringify(r.output)))).toEqual(new Set(['{"value":2}']));
  });

  it('pairs every reply with its own call under heavy concurrency', async () => {
    // Thousands of calls through two lanes: a reply delivered to the wrong call, or a stale
    // wake-up taken for a reply, shows as a mismatch or a WORKER-LOST here.
    let next = 0;
    const mismatches: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 4000) {
          const n = next++;
          const r = await host.call({ tool_id: 't.echo', input: { n } });
          if (r.status !== 'success' || (r.output as { n: number }).n !== n)
            mismatches.push(`${n}: ${JSON.stringify(r.output ?? r.error)}`);
        }
      }),
    );
    expect(mismatches).toEqual([]);
  });

  it('reports a trap, a division by zero and a stack overflow as precise tool faults', async () => {
    const trap = await call('t.trap');
    expect(trap.error?.code).toBe('S-TOOL-TRAP');
    expect(trap.error?.details).toMatchObject({ phase: 'execute', trap: expect.stringMatching(/unreachable/) });
    const div = await call('t.divzero');
    expect(div.error?.code).toBe('S-TOOL-TRAP');
    expect(String(div.error?.details.trap)).toMatch(/divi/i);
    const deep = await call('t.recurse');
    expect(deep.error?.code).toBe('S-TOOL-STACK-OVERFLOW');
    expect((await call('t.echo', { still: 'alive' })).status).toBe('success');
  });

  it('bounds-checks the returned pointer and length', async () => {
    const r = await call('t.badptr');
    expect(r.error?.code).toBe('S-TOOL-BAD-POINTER');
    expect(r.error?.details).toMatchObject({ ptr: 0xfff0, len: 0x100000, memory_bytes: 65536 });
  });

  it('refuses output that is not JSON, not UTF-8, not an envelope, or too large', async () => {
    expect((await call('t.notjson')).error?.code).toBe('S-TOOL-OUTPUT-JSON');
    expect((await call('t.badutf8')).error?.code).toBe('S-TOOL-OUTPUT-ENCODING');
    const env = await call('t.badenvelope');
    expect(env.error?.code).toBe('S-TOOL-OUTPUT-ENVELOPE');
    const big = await call('t.big');
    expect(big.error).toMatchObject({ code: 'S-TOOL-OUTPUT-TOO-LARGE', details: { max_output_bytes: 100 } });
  });

  it("passes a guest's own error through with its class deciding the status", async () => {
    const r = await call('t.guesterr');
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'D-DATA-FORMAT', message: 'line 3 is not FASTA', details: { line: 3 } });
    expect(r.error?.hint).toBeTruthy();
  });

  it("validates output against the tool's output schema", async () => {
    const r = await call('t.wrongout');
    expect(r.error?.code).toBe('C-CONTRACT-OUTPUT-SCHEMA');
    expect(r.error?.details.violations).toEqual([expect.objectContaining({ path: '/value', keyword: 'type' })]);
  });

  it('answers every non-allowlisted capability with the same forbidden bytes', async () => {
    const a = await call('t.cap', { abi_version: 1, name: 'secrets.get.db_password', args: {} });
    const b = await call('t.cap', { abi_version: 1, name: 'clock.now_unix', args: {} });
    expect(a.status).toBe('success');
    expect(a.output).toMatchObject({ status: 'error', error: { code: 'A-AUTH-FORBIDDEN', message: 'forbidden' } });
    expect(JSON.stringify(a.output)).toBe(JSON.stringify(b.output));
    const bad = await call('t.cap', { abi_version: 3, name: 'x.y' });
    expect(bad.output).toMatchObject({ status: 'error', error: { code: 'I-REQ-ENVELOPE' } });
    const terminal = await call('t.terminalcap');
    expect(terminal.error?.code).toBe('A-AUTH-FORBIDDEN');
  });

  it('lists every input schema violation as invalid_request', async () => {
    const r = await call('t.strict', { n: 0, extra: true });
    expect(r.status).toBe('invalid_request');
    expect(r.error?.code).toBe('I-REQ-INPUT');
    const v = r.error?.details.violations as Array<{ path: string; keyword: string }>;
    expect(v.map((x) => x.keyword).sort()).toEqual(['additionalProperties', 'minimum', 'required']);
  });

  it('refuses a malformed envelope, an unknown tool, and an oversized input before running anything', async () => {
    const env = ResponseEnvelopeSchema.parse(await host.call({ tool_id: 42, input: 'x', surprise: 1 }));
    expect(env.status).toBe('invalid_request');
    expect(env.error?.details.violations).toHaveLength(3);
    expect((await call('t.nope')).error?.code).toBe('C-CONTRACT-TOOL-UNKNOWN');
    expect((await call('t.echo', {}, { fn: 'other' })).error?.code).toBe('C-CONTRACT-FN-UNKNOWN');
    const big = await call('t.echo', { s: 'x'.repeat(70_000) });
    expect(big.error).toMatchObject({ code: 'I-REQ-INPUT-SIZE', details: { max_input_bytes: 65536 } });
    expect(big.metrics.fuel_used).toBe(0);
  });

  it('validates and authorizes without executing on dry_run', async () => {
    const r = await call('t.loop', {}, { dry_run: true });
    expect(r.status).toBe('success');
    expect(r.output).toBeNull();
    expect(r.warnings[0]).toMatch(/dry_run/);
  });
});
