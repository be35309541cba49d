// A tool on more data than its fuel covers (ABI-BUDGET-006): the bundled seq.stats, its manifest
// cut down to a fixed budget without limits.perInputMiB, runs out part way through a FASTQ. The
// error names the fuel per MiB it spent on what it had read, the manifest field and the policy
// ceiling; declaring the suggested rate makes the same call succeed, on a bigger file too. And
// `helix test` gives each fixture on data its fuel per input MiB, which that rate is sized from.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { MIB, PolicySchema } from '../abi/index.js';
import { explainFuelShortfall, inputBytesRead, roundRateUp } from '../host/4-calls/policy/fuel-shortfall.js';
import { fixtureLine } from '../cli/test-command.js';
import { runFixtures } from '../host/6-faces/devloop/run-fixtures.js';
import { createHost, type Host, type WasmTool } from '../host/index.js';
import { tempDir } from './helpers/toolpack.js';

const REPO = path.resolve(import.meta.dirname, '..');
const work = tempDir('helix-fuel-shortfall-');
let host: Host | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** `bytes` of FASTQ with 150-base reads. */
function fastq(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const seq = 'ACGTTGCA'.repeat(19).slice(0, 150);
    const rec = `@read${i}\n${seq}\n+\n${'I'.repeat(150)}\n`;
    parts.push(rec);
    size += rec.length;
  }
  return Buffer.from(parts.join(''));
}

/** A copy of the bundled seq.stats whose limits are `fuel` and, when given, perInputMiB.fuel. */
function statsPack(name: string, fuel: number, perInputMiB?: number): string {
  const dir = path.join(work.dir, name);
  cpSync(path.join(REPO, 'plugins', 'seq-stats'), dir, { recursive: true });
  const file = path.join(dir, 'stats.tool.yaml');
  const manifest = YAML.parse(readFileSync(file, 'utf8'));
  manifest.limits.fuel = fuel;
  if (perInputMiB === undefined) delete manifest.limits.perInputMiB;
  else manifest.limits.perInputMiB = { ...manifest.limits.perInputMiB, fuel: perInputMiB };
  writeFileSync(file, YAML.stringify(manifest));
  return dir;
}

describe('a fuel-exhausted call on data', () => {
  it('names its fuel per MiB read, the manifest field and the policy ceiling, and the rate it names is enough', async () => {
    const home = path.join(work.dir, 'home');
    host = await createHost({ toolpacksDir: statsPack('fixed', 20_000_000), home });
    const data = fastq(6 * MIB);
    const id = (await host.artifacts.importInline(data)).id;
    const r = await host.call({ call_id: 'c1', tool_id: 'seq.stats', input: { sequences: id } });
    expect(r.status).toBe('terminal_error');
    expect(r.error?.code).toBe('S-TOOL-FUEL-EXHAUSTED');
    const d = r.error!.details as Record<string, number | string | null>;
    expect(d.input_bytes).toBe(data.length);
    // It stopped part way: it had read some pieces of 1 MiB, not all six.
    expect(d.input_bytes_read).toBeGreaterThan(0);
    expect(d.input_bytes_read).toBeLessThan(data.length);
    expect(d.fuel_per_input_mib).toBe(Math.ceil((d.fuel_used as number) / ((d.input_bytes_read as number) / MIB)));
    expect(d.suggested_per_input_mib).toBe(roundRateUp((d.fuel_per_input_mib as number) * 1.25));
    expect(d).toMatchObject({
      manifest_field: 'limits.perInputMiB.fuel',
      per_input_mib: null,
      policy_field: 'ceilings.perInputMiB.fuel',
      policy_ceiling_per_input_mib: 1_000_000_000,
    });
    expect(r.error!.message).toMatch(
      /on 6 MiB of input: [\d,]+ fuel per MiB of the [\d.]+ MiB of input it read; the manifest declares no limits\.perInputMiB\.fuel\./,
    );
    expect(r.error!.hint).toContain(
      `limits.perInputMiB.fuel in the manifest to about ${(d.suggested_per_input_mib as number).toLocaleString('en-US')}`,
    );
    expect(r.error!.hint).toContain('ceilings.perInputMiB.fuel');
    await host.close();

    // The suggested rate, declared: the same data and two and a half times as much both succeed.
    host = await createHost({ toolpacksDir: statsPack('scaled', 20_000_000, d.suggested_per_input_mib as number), home });
    const again = await host.call({ call_id: 'c2', tool_id: 'seq.stats', input: { sequences: id } });
    expect(again.status, JSON.stringify(again.error)).toBe('success');
    const bigger = (await host.artifacts.importInline(fastq(15 * MIB))).id;
    const big = await host.call({ call_id: 'c3', tool_id: 'seq.stats', input: { sequences: bigger } });
    expect(big.status, JSON.stringify(big.error)).toBe('success');
  });

  it('that ran out before its first read gives the rate over its whole input', async () => {
    host = await createHost({ toolpacksDir: statsPack('tiny', 1000), home: path.join(work.dir, 'home2') });
    const id = (await host.artifacts.importInline(fastq(2 * MIB))).id;
    const r = await host.call({ call_id: 'c1', tool_id: 'seq.stats', input: { sequences: id } });
    expect(r.error?.code).toBe('S-TOOL-FUEL-EXHAUSTED');
    // It ran out before any read: the rate is over the whole input.
    const d = r.error!.details as Record<string, number>;
    expect(d.input_bytes_read).toBe(0);
    expect(d.fuel_per_input_mib).toBe(Math.ceil(d.fuel_used! / (d.input_bytes! / MIB)));
  });

  it('without input artifacts names limits.fuel and the policy’s ceilings.fuel', async () => {
    const dir = path.join(work.dir, 'gc');
    cpSync(path.join(REPO, 'plugins', 'seq-gc-content'), dir, { recursive: true });
    const file = path.join(dir, 'gc-content.tool.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^ {2}fuel: \d+$/m, '  fuel: 2000'));
    host = await createHost({ toolpacksDir: dir, home: path.join(work.dir, 'home3') });
    const r = await host.call({ call_id: 'c1', tool_id: 'seq.gc_content', input: { sequence: 'ACGT'.repeat(5000) } });
    expect(r.error?.code).toBe('S-TOOL-FUEL-EXHAUSTED');
    expect(r.error?.details).toMatchObject({ fuel_limit: 2000, manifest_field: 'limits.fuel', policy_field: 'ceilings.fuel' });
    expect(r.error?.details.fuel_per_input_mib).toBeUndefined();
    expect(r.error?.hint).toMatch(/raise limits\.fuel in the manifest \(now 2,000\); the policy .* caps it at ceilings\.fuel [\d,]+\./);
  });
});

describe('the figures', () => {
  it('round a rate up to two significant digits', () => {
    expect(roundRateUp(34_567_890)).toBe(35_000_000);
    expect(roundRateUp(35_000_000)).toBe(35_000_000);
    expect(roundRateUp(7.2)).toBe(8);
    expect(roundRateUp(0)).toBe(0);
  });

  it('name the policy ceiling to raise when the rate to declare is above it', () => {
    const error = {
      code: 'S-TOOL-FUEL-EXHAUSTED',
      message: 'The tool used up its fuel budget of 1000.',
      details: { fuel_limit: 1000, fuel_used: 1000 },
    };
    const ctx = (ceiling: number) => ({
      limits: {
        fuel: 1000,
        maxMemoryPages: 16,
        timeoutMs: 1000,
        maxInputBytes: 4096,
        maxOutputBytes: 4096,
        maxCapabilityCalls: 0,
        perInputMiB: { fuel: 10 },
      },
      policy: PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, ceilings: { perInputMiB: { fuel: ceiling } } }),
      policySource: 'p.yaml',
      inputs: [{ id: 'a', size: 1024, compression: null }],
      journal: [],
    });
    // 1000 fuel on 1 KiB: 1,024,000 per MiB, and a quarter more rounded up to two digits.
    const over = explainFuelShortfall(error, ctx(1_000_000));
    expect(over.details).toMatchObject({ fuel_per_input_mib: 1_024_000, suggested_per_input_mib: 1_300_000, per_input_mib: 10 });
    expect(over.hint).toContain("that is above the policy's ceilings.perInputMiB.fuel, 1,000,000: raise it too");
    const under = explainFuelShortfall(error, ctx(2_000_000));
    expect(under.hint).toContain('the policy p.yaml allows up to 2,000,000 per MiB (ceilings.perInputMiB.fuel)');
    expect(under.message).toContain('the manifest declares limits.perInputMiB.fuel 10.');
  });

  it('count the furthest read of each input, capped at what it counts for', () => {
    const read = (id: string, offset: number, result: Record<string, unknown>) => ({
      seq: 0,
      name: 'artifact.read',
      args: { artifact_id: id, offset },
      request_sha256: '0'.repeat(64),
      outcome: 'ok' as const,
      mode: 'digest' as const,
      result,
      result_sha256: null,
      hash: '0'.repeat(64),
    });
    const inputs = [
      { id: 'a', size: 10 * MIB, compression: null },
      { id: 'b', size: MIB, compression: 'gzip' as const },
    ];
    const journal = [
      read('a', 0, { next_offset: MIB }),
      read('a', MIB, { bytes: MIB, offset: MIB }),
      read('b', 0, { next_offset: 3 * MIB }),
      read('b', 3 * MIB, { next_offset: 20 * MIB }),
    ];
    // a: 2 MiB read; b: 20 MiB decompressed, capped at 8 x 1 MiB.
    expect(inputBytesRead(inputs, journal as never)).toBe(2 * MIB + 8 * MIB);
  });
});

describe('helix test', () => {
  it('gives each fixture on data its input bytes and fuel per input MiB', async () => {
    host = await createHost({ toolpacksDir: path.join(REPO, 'plugins', 'seq-stats'), home: path.join(work.dir, 'home4') });
    const tool = host.tools().find((t): t is WasmTool => t.kind === 'wasm' && t.id === 'seq.stats')!;
    const results = await runFixtures(host, tool);
    const onData = results.filter((r) => r.input_bytes !== undefined);
    expect(onData.length).toBeGreaterThanOrEqual(2);
    for (const r of onData) expect(r.fuel_per_input_mib).toBe(Math.ceil(r.fuel_used! / (r.input_bytes! / MIB)));
    // A fixture whose artifact does not exist made no run: no rate.
    const missing = results.find((r) => r.fixture === 'missing-artifact.json');
    expect(missing?.ok).toBe(true);
    expect(missing?.fuel_per_input_mib).toBeUndefined();
  });

  it('prints the rate on a fixture line from a MiB of input up, where the fixed cost no longer swamps it', () => {
    const r = { tool: 't', fixture: 'f.json', ok: true, fuel_used: 9_000_000 };
    expect(fixtureLine({ ...r, input_bytes: MIB, fuel_per_input_mib: 9_000_000 })).toBe(
      'ok    t f.json (fuel 9000000, 9000000 per input MiB)',
    );
    expect(fixtureLine({ ...r, input_bytes: MIB - 1, fuel_per_input_mib: 9_000_009 })).toBe('ok    t f.json (fuel 9000000)');
    expect(fixtureLine(r)).toBe('ok    t f.json (fuel 9000000)');
  });
});
