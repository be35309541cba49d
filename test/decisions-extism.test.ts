// Host decisions are final (ABI-FINAL-006) for extism/v1 plugins: WAT plugins importing
// extism:host/user.helix_capability_call that catch what it throws (try/catch_all) or throw their
// own exceptions, run on the real @extism/extism through the real host, broker and LMDB store.
// After each, a well-behaved call in the same host succeeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../host/4-calls/broker/journal.js';
import { createExtismEngine } from '../host/2-sandbox/engine/extism.js';
import { hostStore } from '../host/5-host/host.js';
import { readAudit } from '../host/3-store/audit.js';
import {
  BAD_OFFSET_PLUGIN,
  FILLING_PLUGIN,
  KERNEL_ERROR_CAUGHT,
  stormPlugin,
  throwingPlugin,
  type PluginParts,
} from './helpers/catching-guests.js';
import { abortThenCancel, RACED_ABORT, startDecisionHost, type DecisionHost } from './helpers/decision-kit.js';
import { extismWat } from './helpers/extism-wat.js';
import type { ToolpackSpec } from './helpers/toolpack.js';

const limits = { maxInputBytes: 65_536, maxOutputBytes: 65_536, fuel: 10_000_000_000, maxMemoryPages: 16, maxCapabilityCalls: 100 };
const extism = (id: string, parts: PluginParts, extra: Record<string, unknown> = {}): ToolpackSpec => ({
  id,
  module: extismWat(parts.body, { data: parts.data, extra: parts.extra }),
  manifest: { abi: 'extism/v1', entrypoint: 'run', limits, capabilities: { abiVersion: 1, allow: ['clock.now_unix'] }, ...extra },
});

let h: DecisionHost;

beforeAll(async () => {
  h = await startDecisionHost(
    [
      // A ceiling of 10: this Extism version sometimes takes about 500 ms to answer a host function.
      extism('x.storm', stormPlugin(100_000), { timeoutMs: 60_000, limits: { ...limits, maxCapabilityCalls: 10 } }),
      extism('x.bad_offset', BAD_OFFSET_PLUGIN),
      extism('x.throw_execute', throwingPlugin('execute')),
      extism('x.throw_start', throwingPlugin('start')),
      extism('x.fill', FILLING_PLUGIN),
      extism('x.kernel_error', KERNEL_ERROR_CAUGHT),
      extism('x.one_call', stormPlugin(1)),
    ],
    'x.one_call',
  );
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const call = (toolId: string, input?: Record<string, unknown>) => h.call(toolId, input);
/** After each hostile call, a well-behaved plugin call in the same host succeeds, its one capability call journaled. */
async function expectHostServes(): Promise<void> {
  const r = await h.expectServes();
  expect(readJournal(hostStore(h.host), r.run_id!)).toHaveLength(1);
}

describe('an Extism plugin that catches what helix_capability_call throws (ABI-FINAL-006)', () => {
  it('ends at the call ceiling although it catches it and calls 100,000 times: 11 calls journaled and audited', async () => {
    const r = await call('x.storm');
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 10 } });
    expect(readJournal(hostStore(h.host), r.run_id!)).toHaveLength(11);
    expect(readAudit(hostStore(h.host)).filter((a) => a.run_id === r.run_id && a.kind === 'capability')).toHaveLength(11);
    await expectHostServes();
  }, 120_000);

  it('ends with S-TOOL-BAD-POINTER although it catches the fault and outputs a result', async () => {
    const r = await call('x.bad_offset');
    expect(r.error).toMatchObject({ code: 'S-TOOL-BAD-POINTER', details: { import: 'helix_capability_call' } });
    await expectHostServes();
  });
});

describe('the Extism kernel (ABI-FINAL-006)', () => {
  it("makes no host decision: a plugin may catch the kernel's error and go on", async () => {
    const r = await call('x.kernel_error');
    expect(r.status).toBe('success');
    expect(r.output).toEqual({});
    await expectHostServes();
  });
});

describe('an Extism plugin that throws its own exception (ABI-FINAL-005)', () => {
  it.each(['execute', 'start'] as const)('uncaught, from its %s function, is a terminal S-TOOL-TRAP', async (where) => {
    const r = await call(`x.throw_${where}`);
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { uncaught_exception: true, trap: 'uncaught WebAssembly exception' } });
    expect(r.error?.message).toContain('nothing caught');
    await expectHostServes();
  });
});

describe('an Extism plugin that fills the Extism memory (ABI-FINAL-005)', () => {
  it('is a fault of the tool, never S-TOOL-WORKER-LOST', async () => {
    const r = await call('x.fill');
    expect(r.status).toBe('terminal_error');
    expect(r.error?.code).not.toBe('S-TOOL-WORKER-LOST');
    expect(r.error?.code).toMatch(/^S-TOOL-/);
    await expectHostServes();
  });
});

describe('the Extism engine (ABI-FINAL-001)', () => {
  it("keeps the broker's abort as the outcome when the caller cancels between the abort and the plugin's end", async () => {
    const engine = createExtismEngine({ maxThreads: 1, maxQueue: 10 });
    try {
      expect(await abortThenCancel(engine, h.dir, 'x.one_call')).toMatchObject({
        kind: 'fault',
        code: RACED_ABORT.code,
        details: RACED_ABORT.details,
      });
    } finally {
      await engine.close();
    }
  }, 60_000);
});
