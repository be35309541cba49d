// Guest allocations through the real loader and host (ABI-ALLOC-*): tables past the ceiling and
// oversized modules are refused at load for helix/v1 and extism/v1 alike; tables declared without
// a maximum grow to the ceiling and no further inside a real call; the host serves the next call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MODULE_BYTES, MAX_TABLE_ELEMENTS, PolicySchema, ResponseEnvelopeSchema } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { loadToolpacks } from '../host/4-calls/loader/load-toolpacks.js';
import { formatViolation } from '../host/1-base/files/violation.js';
import { echoModule } from './helpers/guest-wat.js';
import { bigTablesModule, extismTablesPlugin, growTablesModule } from './helpers/table-guests.js';
import { toolpacksDir, tempDir, type ToolpackSpec } from './helpers/toolpack.js';
import { leb } from './helpers/wasm.js';
import { wat2wasm } from './helpers/wat.js';

const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });
const extism = (id: string, module: string): ToolpackSpec => ({ id, module, manifest: { abi: 'extism/v1', entrypoint: 'run' } });
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanups.splice(0)) c();
});

/** The violation lines of loading `specs` alone. */
async function refusals(specs: ToolpackSpec[]): Promise<string[]> {
  const dir = await toolpacksDir(specs);
  cleanups.push(dir.cleanup);
  const { tools, violations } = await loadToolpacks(dir.dir, policy);
  // Ids only: a failure message quoting a loaded tool would print its module bytes.
  expect(tools.map((t) => t.manifest.id)).toEqual([]);
  return violations.map(formatViolation);
}

describe('loading a module whose tables or size pass the bounds', () => {
  for (const count of [3, 6]) {
    it(`the loader refuses a helix/v1 module with ${count} tables of 10 million elements, naming table 0, its size and the ceiling (ABI-ALLOC-002)`, async () => {
      const lines = await refusals([{ id: `t.tables${count}`, module: bigTablesModule(count) }]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `t_tables${count}\\.tool\\.yaml:\\d+: module: ABI-ALLOC-002: table 0 starts at 10000000 elements, above the ceiling of ${MAX_TABLE_ELEMENTS} elements`,
        ),
      );
    });
  }

  it('the loader refuses tables that pass the ceiling only together, naming the table that passes it (ABI-ALLOC-002)', async () => {
    const lines = await refusals([{ id: 't.pair', module: bigTablesModule(2, 600_000) }]);
    expect(lines[0]).toMatch(/ABI-ALLOC-002: table 1 starts at 600000 elements \(1200000 with the tables before it\), above the ceiling/);
  });

  it('the loader refuses an extism/v1 plugin with 3 tables of 10 million elements before its load-time instantiation (ABI-ALLOC-002, ABI-ALLOC-007)', async () => {
    const before = process.memoryUsage().rss;
    const lines = await refusals([extism('x.tables3', extismTablesPlugin(3, 10_000_000))]);
    console.log(
      `extism/v1 3 x 10M tables refused at load; rss ${(before / 2 ** 20).toFixed(0)} -> ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/module: ABI-ALLOC-002: table 0 starts at 10000000 elements/);
  });

  it('the loader refuses a module over MAX_MODULE_BYTES before reading it, naming its size and the bound (ABI-ALLOC-005, ABI-FILE-005)', async () => {
    const small = await wat2wasm(echoModule());
    // A valid module made large by a custom section, which the engine would accept.
    const payload = MAX_MODULE_BYTES - small.length;
    const custom = [0, ...leb(payload + 2), 1, 0x78];
    const bytes = new Uint8Array(small.length + custom.length + payload);
    bytes.set(small);
    bytes.set(custom, small.length);
    const lines = await refusals([{ id: 't.huge', module: bytes }]);
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`module: .*${bytes.length} bytes, more than the bound of ${MAX_MODULE_BYTES} bytes`)),
    ]);
  });
});

describe('a call whose guest grows its tables', () => {
  const home = tempDir('helix-home-');
  let host: Host;
  beforeAll(async () => {
    const dir = await toolpacksDir([
      { id: 't.grow3', module: growTablesModule(3) },
      { id: 't.echo', module: echoModule() },
      extism('x.grow2', extismTablesPlugin(2)),
    ]);
    cleanups.push(dir.cleanup, home.cleanup);
    host = await createHost({ toolpacksDir: dir.dir, home: home.dir });
  }, 120_000);
  afterAll(async () => host?.close());

  const call = async (tool: string, input: Record<string, unknown> = {}) =>
    ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input }));
  const survives = async () => expect((await call('t.echo', { after: 'tables' })).output).toEqual({ after: 'tables' });

  it('a helix/v1 guest grows three tables declared without a maximum to MAX_TABLE_ELEMENTS in all, and table.grow then fails inside it (ABI-ALLOC-001, ABI-ALLOC-003)', async () => {
    const r = await call('t.grow3');
    expect(r.status).toBe('success');
    expect(r.output).toEqual({ value: MAX_TABLE_ELEMENTS });
    await survives();
  }, 60_000);

  it('an extism/v1 plugin grows its two tables to MAX_TABLE_ELEMENTS in all, through the same instrumenter (ABI-ALLOC-007)', async () => {
    const r = await call('x.grow2');
    expect(r.status).toBe('success');
    expect(r.output).toEqual({ size: MAX_TABLE_ELEMENTS });
    await survives();
  }, 60_000);
});
