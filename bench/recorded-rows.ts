// The recorded call's rows: a new run (host.call with run identity and the run's record in LMDB)
// and its throughput with calls in flight, the replay, and the same call as an MCP tools/call
// from the SDK's client over its in-memory transport.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createHost } from '../host/index.js';
import { createMcpServer } from '../host/6-faces/mcp/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { fixtureDir } from './call-path.js';
import { measureRecordedCall } from './recorded-call.js';
import type { BenchConfig } from './options.js';
import { makeRow, type Row } from './rows.js';
import { latency } from './stats.js';

const INPUT = { sequence: 'GATTACA'.repeat(8), id: 'read-0001', tags: ['bench', 'echo'], n: 42 };

/** Latency (µs) of host.call and of MCP tools/call on one host, alternated in blocks, every call a new run. */
async function measureMcp(calls: number): Promise<{ host: number; mcp: number }> {
  const home = mkdtempSync(path.join(tmpdir(), 'helix-bench-mcp-'));
  const host = await createHost({ toolpacksDir: fixtureDir('echo'), policy: loadPolicy(undefined), home });
  const mcp = createMcpServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'bench', version: '1' });
  try {
    await mcp.connect(serverSide);
    await client.connect(clientSide);
    let n = 0;
    const hostCall = async () => {
      const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: n++ } });
      if (r.status !== 'success' || r.replayed) throw new Error(`bench.echo did not execute: ${JSON.stringify(r.error ?? r.warnings)}`);
    };
    const mcpCall = async () => {
      const r = await client.callTool({ name: 'bench-echo', arguments: { ...INPUT, n: n++ } });
      if (r.isError === true || (r._meta as Record<string, unknown>)['helix/replayed'] !== false)
        throw new Error(`bench-echo over MCP did not execute: ${JSON.stringify(r.content)}`);
    };
    const a = await latency(hostCall, calls, Math.min(100, calls));
    const b = await latency(mcpCall, calls, Math.min(100, calls));
    return { host: a.median, mcp: b.median };
  } finally {
    await client.close();
    await mcp.close();
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The recorded-call rows: new run (target 1 ms), runs/s in flight (target 4,000), replay, MCP. */
export async function recordedRows(config: BenchConfig): Promise<Row[]> {
  const c = config.calls;
  const f = await measureRecordedCall({ calls: c.recorded, throughputCalls: c.recordedThroughput, inFlight: 64 });
  const mcp = await measureMcp(c.recorded);
  return [
    makeRow({
      id: 'recorded.new_run',
      name: 'host.call of bench.echo, new recorded run, median',
      unit: 'µs',
      figure: f.newRun.median,
      target: { of: 'figure', op: '<=', value: 1000 },
      samples: c.recorded,
      note: `p99 ${f.newRun.p99.toFixed(0)} µs`,
    }),
    makeRow({
      id: 'recorded.throughput',
      name: `host.call of bench.echo, new runs, ${f.inFlight} in flight`,
      unit: 'runs/s',
      figure: f.runsPerSecond,
      target: { of: 'figure', op: '>=', value: 4000 },
      samples: c.recordedThroughput,
    }),
    makeRow({
      id: 'recorded.replay',
      name: 'host.call of bench.echo, replay of a succeeded run, median',
      unit: 'µs',
      figure: f.replay.median,
      baseline: { name: 'new run', figure: f.newRun.median },
      samples: c.recorded,
      note: `p99 ${f.replay.p99.toFixed(0)} µs`,
    }),
    makeRow({
      id: 'recorded.mcp',
      name: 'MCP tools/call of bench-echo (SDK client, in-memory transport), new run, median',
      unit: 'µs',
      figure: mcp.mcp,
      baseline: { name: 'host.call on the same host', figure: mcp.host },
      samples: c.recorded,
    }),
  ];
}
