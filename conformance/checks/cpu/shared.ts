// What the CPU checks share: the budgets they set, a toolpack whose entry runs a body on any
// engine, the loops whose cost the model fixes to the unit, and the assertions on how fuel ran out.
import { gzipSync } from 'node:zlib';
import { MIB, type ResponseEnvelope } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type CheckContext, type EngineAdapter, type PackSpec } from '../../check.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';

/** The budget of the checks that run until fuel runs out. */
export const FUEL = 5_000_000;
/** A loop that never ends. */
export const SPIN = '(loop $l (br $l))';

/** What a body's toolpack is made of, beyond the body. */
export interface PackOptions {
  /** Locals of the entry function, declared first. */
  readonly locals?: string;
  /** Module fields (functions, a start, data). */
  readonly extra?: string;
  readonly pages?: number;
  readonly limits?: Record<string, unknown>;
  readonly timeoutMs?: number;
  readonly manifest?: Record<string, unknown>;
  readonly inputSchema?: unknown;
}

/** A toolpack for `engine` whose entry runs `body` (leaving nothing) and answers {}: the same body on every engine. */
export function pack(engine: EngineAdapter, id: string, body: string, o: PackOptions = {}): PackSpec {
  const manifest = { timeoutMs: o.timeoutMs ?? 60_000, limits: { ...DEFAULT_LIMITS, ...o.limits }, ...o.manifest };
  const module = engine.guests.running(body, {
    pages: o.pages ?? 1,
    ...(o.locals === undefined ? {} : { locals: o.locals }),
    ...(o.extra === undefined ? {} : { extra: o.extra }),
  });
  return engine.pack(id, module, manifest, o.inputSchema === undefined ? {} : { inputSchema: o.inputSchema });
}

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
export const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

/** The error details of a response ({} for none). */
export const details = (r: ResponseEnvelope): Record<string, unknown> => (r.error?.details ?? {}) as Record<string, unknown>;

/** The call ends with S-TOOL-FUEL-EXHAUSTED under `limit`, having used at least the limit and at most `overshoot` more. */
export function expectExhausted(r: ResponseEnvelope, limit: number, overshoot = 1000): void {
  expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
  const d = details(r);
  expect(d.fuel_limit === limit, `details.fuel_limit is ${String(d.fuel_limit)}, not the budget ${limit}`);
  expect(r.metrics.fuel_used >= limit, `fuel_used ${r.metrics.fuel_used} is below the budget ${limit}`);
  expect(r.metrics.fuel_used <= limit + overshoot, `fuel_used ${r.metrics.fuel_used} passes the budget ${limit} by more than ${overshoot}`);
}

/** The fuel a call used, failing unless it succeeded and ran rather than replayed. */
export function expectFuel(r: ResponseEnvelope): number {
  expectSuccess(r);
  expect(r.replayed === false, 'the call was replayed, not run');
  return r.metrics.fuel_used;
}

/** A counted loop of `n` iterations costing exactly 9 units each (ABI-FUEL-002), with a free nop and drop. */
export const countedLoop = (n: number, extraBody = ''): string => `
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (nop) (drop (i32.const 7))
      ${extraBody}
      (br_if $l (i32.lt_u (local.get $i) (i32.const ${n}))))`;
/** What one iteration of countedLoop costs: 9 charged instructions (ABI-FUEL-002). */
export const LOOP_UNIT = 9;
/** One i32x4 addition, added to a counted loop. */
export const SIMD_STEP = '(local.set $v (i32x4.add (local.get $v) (v128.const i32x4 1 2 3 4)))';
/** What one iteration of a counted loop with SIMD_STEP costs. */
export const SIMD_UNIT = LOOP_UNIT + 4;

/** An input schema with two artifact fields and an inline string. */
export const ARTIFACT_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    data: { type: 'string', 'x-helix-artifact': true },
    extra: { type: 'string', 'x-helix-artifact': true },
    pad: { type: 'string' },
    n: { type: 'integer' },
  },
};

/** The base fuel of the budget checks, and what each MiB of input adds. */
export const BASE = 1_000_000;
export const RATE = 2_000_000;

/** Artifacts of 1 MiB, 3 MiB and a gzip of 1 MiB of one byte, imported into the check's store. */
export async function importArtifacts(ctx: CheckContext): Promise<{ one: string; three: string; gz: string; gzSize: number }> {
  const host = await ctx.host();
  const one = (await host.artifacts.importInline(Buffer.alloc(MIB, 0x41), { label: 'one MiB' })).id;
  const three = (await host.artifacts.importInline(Buffer.alloc(3 * MIB, 0x43), { label: 'three MiB' })).id;
  const gzRecord = await host.artifacts.importInline(gzipSync(Buffer.alloc(MIB, 0x47)), { label: 'gzip' });
  expect(gzRecord.compression === 'gzip', `the gzip artifact was stored as ${String(gzRecord.compression)}`);
  return { one, three, gz: gzRecord.id, gzSize: gzRecord.size };
}
