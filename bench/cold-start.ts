// Cold start of a large module, measured in a process of its own (so no compile of an earlier
// measurement is reused in memory): createHost over a toolpack with a generated module of a
// chosen size (load, validate, instrument, compile) and its first call; then V8's compile alone.
// `node dist/bench/cold-start.js PLUGINS HOME N` prints the figures as JSON.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { sha256Digest } from '../host/1-base/hashing.js';
import { createHost } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { bigModule } from '../test/helpers/big-module.js';

/** The id of the generated tool. */
export const COLD_TOOL = 'bench.cold_start';
const BODY_BYTES = 256;

/** Writes a toolpack whose module has about `codeBytes` of code (fillers V8 must all compile); returns its module size. */
export function writeColdToolpack(dir: string, codeBytes: number): number {
  const bytes = bigModule({ functions: Math.max(1, Math.round(codeBytes / BODY_BYTES)), bodyBytes: BODY_BYTES });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'cold.wasm'), bytes);
  const manifest = {
    id: COLD_TOOL,
    version: '1.0.0',
    contractVersion: 'v1',
    description: 'A generated module of many functions, for measuring a cold start.',
    abi: 'helix/v1',
    module: 'cold.wasm',
    digest: sha256Digest(bytes),
    deterministic: 'pure',
    timeoutMs: 60000,
    limits: { maxInputBytes: 4096, maxOutputBytes: 4096, fuel: 1_000_000_000, maxMemoryPages: 16, maxCapabilityCalls: 0 },
    capabilities: { abiVersion: 1, allow: [] },
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
    declaredOutputs: [],
  };
  writeFileSync(path.join(dir, 'cold.tool.yaml'), stringify(manifest));
  return bytes.length;
}

/** What one cold-start process measured, ms. */
export interface ColdStartFigures {
  /** createHost on the toolpack and the tool's first call (input `{n}`), to its answer. */
  readonly startMs: number;
  /** WebAssembly.compile of the same module's bytes, nothing else. */
  readonly compileMs: number;
}

async function measure(plugins: string, home: string, n: number): Promise<ColdStartFigures> {
  const t0 = performance.now();
  const host = await createHost({ toolpacksDir: plugins, policy: loadPolicy(undefined), home });
  const r = await host.call({ tool_id: COLD_TOOL, input: { n } });
  const startMs = performance.now() - t0;
  await host.close();
  if (r.status !== 'success' || r.replayed) throw new Error(`${COLD_TOOL} did not execute: ${JSON.stringify(r.error ?? r.warnings)}`);
  const bytes = readFileSync(path.join(plugins, 'cold.wasm'));
  const t1 = performance.now();
  await WebAssembly.compile(bytes);
  return { startMs, compileMs: performance.now() - t1 };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [plugins, home, n] = process.argv.slice(2);
  if (plugins === undefined || home === undefined) {
    process.stderr.write('usage: node dist/bench/cold-start.js PLUGINS HOME [N]\n');
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(await measure(plugins, home, Number(n ?? 0)))}\n`);
}
