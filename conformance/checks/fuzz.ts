// Conformance checks: fuzz. The property tests (test/fuzz-*.test.ts, `npm run fuzz`) found no
// failure, so these carry the fuzzing forward: each replays a fixed sample of generated cases,
// drawn from fixed seeds by the same generators (conformance/kit/fuzz-*.ts), against the real
// host: broken and edited manifests refused at load, valid ones served, random programs run
// instrumented with the result of the program itself and exact fuel, malformed request, output
// and capability envelopes and random capability arguments each answered with the code of their
// first fault.
import { parse as parseYaml } from 'yaml';
import {
  CapabilityResponseSchema,
  checkJsonValue,
  errorClassOf,
  RequestEnvelopeSchema,
  ResponseEnvelopeSchema,
  scanJsonText,
  ToolManifestSchema,
  type ResponseEnvelope,
} from '../../abi/index.js';
import { CAPABILITIES } from '../../capabilities/index.js';
import { jsonRefusal } from '../../host/1-base/json-entry.js';
import { FUEL_EXPORT, instrumentModule } from '../../host/2-sandbox/wasm/index.js';
import { checkDefaultPolicy } from '../runner.js';
import { expect, expectOutcome, type Check, type CheckContext, type CheckEnv, type PackSpec, type PolicyDocument } from '../check.js';
import {
  argNames,
  capabilityRequestValue,
  guestErrorValue,
  guestOutputValue,
  mutatedText,
  randomArgs,
  requestEnvelopeValue,
} from '../kit/fuzz-envelopes.js';
import { extismSelectorModule, selectorModule } from '../kit/fuzz-guests.js';
import { decode, expectedAnswer, expectedForExtismError, expectedForExtismOutput, expectedForOutput } from '../kit/fuzz-oracles.js';
import { breakManifest, manifestText, mutateText, validManifest } from '../kit/fuzz-manifests.js';
import { extismGuestModule, guestModule, randomProgram, type Program } from '../kit/fuzz-programs.js';
import { rand, sampleSeeds } from '../kit/fuzz-random.js';
import { echoModule } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS, digestOf } from '../kit/toolpack.js';
import { wat2wasm } from '../kit/wat.js';

const encoder = new TextEncoder();

/** Counts of a list of labels, for the evidence. */
function tally(labels: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[l] = (out[l] ?? 0) + 1;
  return out;
}

/** Memoized per process: the sample is the same on every run, so each is generated once. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
}

/** The echo module's bytes and digest, for manifests written by hand. */
const echo = once(async () => {
  const bytes = await wat2wasm(echoModule());
  return { bytes, digest: digestOf(bytes) };
});

// ---- manifests -------------------------------------------------------------------------------

interface ManifestCase {
  readonly file: string;
  readonly text: string;
  readonly what: string;
  /** The top-level field a violation must name; undefined for YAML edits (only the file). */
  readonly field?: string;
}

/** 30 manifests broken on purpose and 10 YAML texts edited until the schema refuses them. */
const brokenManifests = once(async (): Promise<ManifestCase[]> => {
  const { digest } = await echo();
  const cases: ManifestCase[] = sampleSeeds(0xf022_0001, 30).map((seed, i) => {
    const r = rand(seed);
    const broken = breakManifest(r, validManifest(r, digest));
    return { file: `fuzz_m${i}.tool.yaml`, text: manifestText(broken.manifest), what: broken.what, field: broken.field.split(/[.[]/)[0]! };
  });
  let i = 0;
  for (const seed of sampleSeeds(0xf022_0002, 200)) {
    if (i === 10) break;
    const r = rand(seed);
    const edited = mutateText(r, manifestText(validManifest(r, digest)));
    if (schemaAccepts(edited.text)) continue;
    cases.push({ file: `fuzz_t${i}.tool.yaml`, text: edited.text, what: `YAML edited: ${edited.what}` });
    i += 1;
  }
  return cases;
});

/** Whether the manifest schema accepts a YAML text (as a plain YAML reader reads it). */
function schemaAccepts(text: string): boolean {
  try {
    return ToolManifestSchema.safeParse(parseYaml(text, { maxAliasCount: 100 })).success;
  } catch {
    return false;
  }
}

/** A pack whose manifest is written as given (it overwrites the one writeToolpack writes). */
function rawManifestPack(id: string, file: string, module: Uint8Array, text: string): PackSpec {
  return { id, module, extraFiles: { [file]: text } };
}

// ---- programs --------------------------------------------------------------------------------

interface ProgramCase {
  readonly id: string;
  readonly program: Program;
  readonly cap: number;
  readonly bytes: Uint8Array;
  /** The same program as an extism/v1 plugin. */
  readonly extism: Uint8Array;
  /** What the program itself does, uninstrumented, with memory capped as the host caps it. */
  readonly expected: { output: unknown } | { trap: string };
  /** Fuel the instrumented module uses for one call, run in this process. */
  readonly fuel: bigint | undefined;
}

const INPUT = encoder.encode('{"n":1}');

/** Runs a helix/v1 module in this process as the host does (alloc, input, execute, dealloc), metered when `fuel` is given. */
async function runGuestHere(bytes: Uint8Array, fuel?: bigint): Promise<{ output?: unknown; trap?: string; used?: bigint }> {
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const x = instance.exports as Record<string, any>;
  if (fuel !== undefined) (x[FUEL_EXPORT] as WebAssembly.Global).value = fuel;
  try {
    const memory = x.memory as WebAssembly.Memory;
    const inPtr = (x.alloc(INPUT.length) as number) >>> 0;
    new Uint8Array(memory.buffer).set(INPUT, inPtr);
    const packed = x.execute(inPtr, INPUT.length) as bigint;
    const ptr = Number(packed >> 32n);
    const len = Number(packed & 0xffffffffn);
    const text = new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len).slice());
    x.dealloc(ptr, len);
    x.dealloc(inPtr, INPUT.length);
    const used = fuel === undefined ? undefined : fuel - ((x[FUEL_EXPORT] as WebAssembly.Global).value as bigint);
    return { output: (JSON.parse(text) as { output: unknown }).output, ...(used === undefined ? {} : { used }) };
  } catch (e) {
    return { trap: (e as Error).message };
  }
}

const programCases = once(
  async (): Promise<ProgramCase[]> =>
    Promise.all(
      sampleSeeds(0xf022_0003, 24).map(async (seed, i) => {
        const r = rand(seed);
        const program = randomProgram(r, { pages: [1, 3], tables: [0, 2] });
        const cap = r.int(program.pages, program.pages + 4);
        const effective = Math.min(program.maxPages ?? Infinity, cap);
        const bytes = await wat2wasm(guestModule(program));
        const reference = await runGuestHere(await wat2wasm(guestModule(program, { maxPages: effective })));
        const metered =
          reference.trap === undefined ? await runGuestHere(instrumentModule(bytes, { maxMemoryPages: cap }).bytes, 1n << 40n) : undefined;
        const extism = await wat2wasm(extismGuestModule(program));
        return {
          id: `fuzz.p${i}`,
          program,
          cap,
          bytes,
          extism,
          expected: reference.trap === undefined ? { output: reference.output } : { trap: reference.trap },
          fuel: metered?.used,
        };
      }),
    ),
);

/** The programs that run to the end whose fuel is checked for exhaustion, with one unit less than they need. */
const EXHAUSTED = 6;

// ---- envelopes -------------------------------------------------------------------------------

/** 50 guest output envelopes, valid or mutated in shape or bytes, in one selector module per engine (an extism/v1 plugin sends them as its output). */
const outputCases = once(async () => {
  const names = [...CAPABILITIES.keys()];
  const cases = sampleSeeds(0xf022_0004, 50).map((seed) => {
    const r = rand(seed);
    return mutatedText(r, guestOutputValue(r, names));
  });
  const bytes = cases.map((c) => c.bytes);
  return { cases, helix: await wat2wasm(selectorModule(bytes, 'output')), extism: await wat2wasm(extismSelectorModule(bytes, 'output')) };
});

/** 30 error objects, valid or mutated, that an extism/v1 plugin sets with error_set. */
const errorCases = once(async () => {
  const cases = sampleSeeds(0xf022_0009, 30).map((seed) => {
    const r = rand(seed);
    return mutatedText(r, guestErrorValue(r));
  });
  return {
    cases,
    module: await wat2wasm(
      extismSelectorModule(
        cases.map((c) => c.bytes),
        'error',
      ),
    ),
  };
});

/** 50 capability requests, valid or mutated, and two at the JSON bounds, all in one selector module. */
const requestCases = once(async () => {
  const cases = sampleSeeds(0xf022_0005, 50).map((seed) => {
    const r = rand(seed);
    return mutatedText(r, capabilityRequestValue(r, CAPABILITIES));
  });
  // Two at the JSON bounds, which random shapes seldom reach (ABI-JSON-006): args too deep end the run, a number a double cannot hold inside args is answered.
  const deep = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`;
  cases.push({
    bytes: encoder.encode(`{"abi_version":1,"name":"kv.put","args":{"key":"k","value":${deep}}}`),
    what: 'kv.put with a value nested 70 deep',
  });
  cases.push({
    bytes: encoder.encode('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":[1e400]}}'),
    what: 'kv.put with the number 1e400',
  });
  return {
    cases,
    module: await wat2wasm(
      selectorModule(
        cases.map((c) => c.bytes),
        'request',
      ),
    ),
  };
});

/** The capability answer a request selector guest outputs ({"answer": ...}). */
function answerOf(r: ResponseEnvelope): { status: 'ok' } | { status: 'error'; error: { code: string; details: Record<string, unknown> } } {
  return CapabilityResponseSchema.parse((r.output as { answer: unknown }).answer) as never;
}

/** A closed local port: an http.request that passes every check fails fast, reaching nothing. */
const ORIGIN = 'http://127.0.0.1:9';
/** The capabilities the arguments check allows and grants: all that need no outside service, secret or declared output. */
const ARG_CAPABILITIES = [
  'clock.now_unix',
  'log.emit',
  'kv.get',
  'kv.put',
  'kv.delete',
  'kv.list',
  'artifact.stat',
  'artifact.read',
  'artifact.list',
  'http.request',
];

/** 50 argument sets for capabilities the guest is allowed and granted, all in one selector module. */
const argCases = once(async () => {
  const cases = sampleSeeds(0xf022_0006, 50).map((seed) => {
    const r = rand(seed);
    const name = r.pick(ARG_CAPABILITIES);
    const args = randomArgs(r, argNames(CAPABILITIES.get(name)!.args));
    return { name, args, bytes: encoder.encode(JSON.stringify({ abi_version: 1, name, args })) };
  });
  return {
    cases,
    module: await wat2wasm(
      selectorModule(
        cases.map((c) => c.bytes),
        'request',
      ),
    ),
  };
});

/** The policy of the checks whose guest calls ARG_CAPABILITIES: the default, with http.request granted towards the closed local port. */
function grantingPolicy(env: CheckEnv): PolicyDocument {
  return {
    ...checkDefaultPolicy(env),
    grants: { '*': ['clock.*', 'log.*', 'kv.*', 'artifact.*', 'http.request'] },
    network: { allow: [ORIGIN], allowPrivate: ['127.0.0.1'] },
  };
}

/** The toolpack of a selector module calling ARG_CAPABILITIES. */
function requestPack(id: string, module: Uint8Array): PackSpec {
  return {
    id,
    module,
    manifest: { deterministic: 'side_effectful', capabilities: { abiVersion: 1, allow: ARG_CAPABILITIES, network: [ORIGIN] } },
  };
}

/** Shows a few of a sample's cases in the report. */
function showSample(ctx: CheckContext, label: string, lines: readonly string[]): void {
  ctx.show({ label, lang: 'text', text: lines.join('\n') });
}

const hex = (b: Uint8Array): string => {
  const t = decode(b);
  return t !== undefined && !/[\u0000-\u001f]/.test(t) ? t : `hex ${Buffer.from(b).toString('hex')}`;
};

export const fuzzChecks: readonly Check[] = [
  {
    id: 'fuzz.broken-manifests',
    title: '40 generated manifests that break the schema are each refused at load, named by file',
    category: 'fuzz',
    abi: ['ABI-LOAD-001', 'ABI-LOAD-002'],
    engines: ['helix'],
    expected:
      'the host refuses to start with P-PRECOND-MANIFEST-INVALID; every one of the 40 manifest files (30 broken on purpose, 10 YAML texts edited until the schema refuses them) is named by a violation, the 30 with the field that was broken',
    async packs() {
      const { bytes } = await echo();
      return (await brokenManifests()).map((c, i) =>
        rawManifestPack(c.file.replace(/_/, '.').replace('.tool.yaml', ''), c.file, bytes, c.text),
      );
    },
    async run(ctx) {
      const cases = await brokenManifests();
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID`);
      const violations = (refusal.details.violations ?? []) as string[];
      const missing: string[] = [];
      for (const c of cases) {
        const mine = violations.filter((v) => v.includes(`/${c.file}`) || v.startsWith(c.file));
        if (mine.length === 0 || (c.field !== undefined && !mine.some((v) => v.includes(c.field!)))) missing.push(`${c.file} (${c.what})`);
      }
      expect(
        missing.length === 0,
        `${missing.length} broken manifests were not named as they should be: ${missing.slice(0, 5).join('; ')}`,
      );
      expect(
        !violations.some((v) => v.includes('_canary')),
        `the canary's valid manifest was named: ${violations.filter((v) => v.includes('_canary')).join('; ')}`,
      );
      ctx.observe('manifests', cases.length);
      ctx.observe('violations', violations.length);
      ctx.observe('sample_violations', violations.slice(0, 6));
      showSample(
        ctx,
        'what was broken (first 12)',
        cases.slice(0, 12).map((c) => `${c.file}: ${c.what}`),
      );
      ctx.show({ label: cases[0]!.file, lang: 'yaml', text: cases[0]!.text });
    },
  },
  {
    id: 'fuzz.valid-manifests',
    title: '10 generated valid manifests load and are served',
    category: 'fuzz',
    abi: ['ABI-LOAD-001', 'ABI-LOAD-002', 'ABI-LOAD-005'],
    engines: ['helix'],
    expected:
      'the host starts over 10 random valid manifests (limits, capabilities, network origins, declared outputs, schemas) and offers each tool at its id and version',
    async packs() {
      const { bytes, digest } = await echo();
      return sampleSeeds(0xf022_0007, 10).map((seed, i) => {
        const m = validManifest(rand(seed), digest);
        return rawManifestPack(`fuzz.v${i}`, `fuzz_v${i}.tool.yaml`, bytes, manifestText(m));
      });
    },
    async run(ctx) {
      const host = await ctx.host();
      const { digest } = await echo();
      const wanted = sampleSeeds(0xf022_0007, 10).map((seed) => validManifest(rand(seed), digest));
      const offered = new Set(host.tools().map((t) => `${t.id}@${t.version}`));
      const absent = wanted.filter((m) => !offered.has(`${String(m.id)}@${String(m.version)}`));
      expect(absent.length === 0, `${absent.length} valid manifests are not offered: ${absent.map((m) => m.id).join(', ')}`);
      ctx.observe(
        'tools',
        wanted.map((m) => `${String(m.id)}@${String(m.version)}`),
      );
      ctx.show({ label: 'fuzz_v0.tool.yaml', lang: 'yaml', text: manifestText(wanted[0]!) });
    },
  },
  {
    id: 'fuzz.instrumented-programs',
    title: '24 random programs run instrumented with the result of the program itself and exact, repeatable fuel',
    category: 'fuzz',
    abi: ['ABI-FUEL-001', 'ABI-FUEL-004', 'ABI-MEMORY-002', 'ABI-EXTISM-009'],
    engines: ['helix', 'extism'],
    expected:
      'each program (loops, branches, calls, memory and table growth) answers what it answers uninstrumented with its memory maximum at the cap (or traps S-TOOL-TRAP where it traps), with metrics.fuel_used > 0, the same on a second call and equal to the fuel its instrumented module uses in this process, memory_peak_pages within the cap; and 6 of them, given one unit of fuel less than they need, end S-TOOL-FUEL-EXHAUSTED. On extism/v1 the same programs as plugins answer the same values, with fuel_used > 0 and the same on a second call',
    async packs(engine) {
      const cases = await programCases();
      if (engine.name === 'extism')
        return cases.map((c) => ({
          id: c.id,
          module: c.extism,
          manifest: { abi: 'extism/v1', entrypoint: 'run', limits: { ...DEFAULT_LIMITS, maxMemoryPages: c.cap } },
        }));
      const packs: PackSpec[] = cases.map((c) => ({
        id: c.id,
        module: c.bytes,
        manifest: { limits: { ...DEFAULT_LIMITS, maxMemoryPages: c.cap } },
      }));
      const finishing = cases.filter((c) => c.fuel !== undefined).slice(0, EXHAUSTED);
      for (const c of finishing)
        packs.push({
          id: c.id.replace('.p', '.x'),
          module: c.bytes,
          manifest: { limits: { ...DEFAULT_LIMITS, maxMemoryPages: c.cap, fuel: Number(c.fuel! - 1n) } },
        });
      return packs;
    },
    async run(ctx) {
      const cases = await programCases();
      const helix = ctx.engine.name !== 'extism';
      const outcomes: string[] = [];
      const fuelUsed: number[] = [];
      for (const c of cases) {
        const first = await ctx.call(c.id, { n: 1 });
        fuelUsed.push(first.metrics.fuel_used);
        const second = await ctx.call(c.id, { n: 2 });
        if ('trap' in c.expected) {
          expectOutcome(first, 'terminal_error', 'S-TOOL-TRAP');
          outcomes.push('trap');
        } else {
          const out = first.status === 'success' ? first.output : first.error;
          expect(
            first.status === 'success' && JSON.stringify(first.output) === JSON.stringify(c.expected.output),
            `${c.id}: answered ${first.status} ${JSON.stringify(out)}, the program itself answers ${JSON.stringify(c.expected.output)}`,
          );
          // The helix/v1 guest's fuel is known to the unit: its instrumented module run here, as the host runs it.
          if (helix)
            expect(
              first.metrics.fuel_used === Number(c.fuel),
              `${c.id}: fuel_used ${first.metrics.fuel_used}, its instrumented module uses ${c.fuel} in this process`,
            );
          outcomes.push('success');
        }
        expect(
          second.status === first.status && JSON.stringify(second.output) === JSON.stringify(first.output),
          `${c.id}: a second call answered differently`,
        );
        expect(
          first.metrics.fuel_used > 0 && second.metrics.fuel_used === first.metrics.fuel_used,
          `${c.id}: fuel_used ${first.metrics.fuel_used} then ${second.metrics.fuel_used}`,
        );
        expect(
          first.metrics.memory_peak_pages <= c.cap,
          `${c.id}: memory_peak_pages ${first.metrics.memory_peak_pages} above the cap of ${c.cap}`,
        );
      }
      ctx.observe('outcomes', tally(outcomes));
      ctx.observe('fuel_used', fuelUsed);
      ctx.show({
        label: `${cases[0]!.id} (module)`,
        lang: 'wat',
        text: helix ? guestModule(cases[0]!.program) : extismGuestModule(cases[0]!.program),
      });
      if (!helix) return;
      const finishing = cases.filter((c) => c.fuel !== undefined).slice(0, EXHAUSTED);
      for (const c of finishing) {
        const r = await ctx.call(c.id.replace('.p', '.x'), { n: 1 });
        expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
        expect(
          r.error?.details.fuel_limit === Number(c.fuel! - 1n),
          `${c.id}: details.fuel_limit ${String(r.error?.details.fuel_limit)}, the budget was ${c.fuel! - 1n}`,
        );
      }
      ctx.observe('exhausted_with_one_unit_less', finishing.length);
    },
  },
  {
    id: 'fuzz.request-envelopes',
    title: '50 generated request envelopes, valid and mutated, each answered with one valid response',
    category: 'fuzz',
    abi: ['ABI-JSON-005', 'ABI-JSON-003'],
    engines: ['helix'],
    expected:
      'host.call never throws: an envelope the JSON check refuses is invalid_request with its I-REQ-JSON code, one the request schema refuses is invalid_request I-REQ-ENVELOPE listing violations, both with run_id null; a valid one to the echo tool answers its input',
    packs: () => [{ id: 'fuzz.echo', module: echoModule() }],
    async run(ctx) {
      const host = await ctx.host();
      const kinds: string[] = [];
      const lines: string[] = [];
      for (const seed of sampleSeeds(0xf022_0008, 50)) {
        const r = rand(seed);
        const raw = requestEnvelopeValue(r, r.pick(['fuzz.echo', 'fuzz.echo', 'fuzz.nope', 'FUZZ.ECHO', '']));
        let res: ResponseEnvelope;
        try {
          res = ResponseEnvelopeSchema.parse(await host.call(raw as never));
        } catch (e) {
          throw new Error(`host.call threw for ${JSON.stringify(raw)}: ${(e as Error).message}`);
        }
        const shown = `${JSON.stringify(raw).slice(0, 200)} -> ${res.status} ${res.error?.code ?? ''}`;
        if (lines.length < 12) lines.push(shown);
        const violation = checkJsonValue(raw, { envelope: true });
        if (violation !== undefined) {
          expectOutcome(res, 'invalid_request', jsonRefusal(violation, 'request', '').code);
          expect(res.run_id === null, `a refused request has run ${res.run_id}: ${shown}`);
          kinds.push('json');
        } else if (!RequestEnvelopeSchema.safeParse(raw).success) {
          expectOutcome(res, 'invalid_request', 'I-REQ-ENVELOPE');
          expect(res.run_id === null && (res.error!.details.violations as unknown[]).length > 0, `no violations or a run: ${shown}`);
          kinds.push('envelope');
        } else {
          const req = RequestEnvelopeSchema.parse(raw);
          if (req.tool_id !== 'fuzz.echo') expect(res.status !== 'success', `an unknown tool succeeded: ${shown}`);
          else if (res.status === 'success' && !req.dry_run)
            expect(JSON.stringify(res.output) === JSON.stringify(req.input), `the echo answered another value: ${shown}`);
          expect(res.error === undefined || errorClassOf(res.error.code) !== undefined, `a code outside the taxonomy: ${shown}`);
          kinds.push(res.status);
        }
      }
      ctx.observe('outcomes', tally(kinds));
      showSample(ctx, 'first 12 envelopes and their answers', lines);
    },
  },
  {
    id: 'fuzz.guest-outputs',
    title: '50 generated guest outputs, valid and mutated in shape or bytes, each classed by its first fault (and 30 Extism errors)',
    category: 'fuzz',
    abi: ['ABI-OUTPUT-001', 'ABI-OUTPUT-002', 'ABI-JSON-002', 'ABI-EXTISM-007', 'ABI-EXTISM-008'],
    engines: ['helix', 'extism'],
    expected:
      'bytes that are not UTF-8 end S-TOOL-OUTPUT-ENCODING, a JSON-bounds breach its S-TOOL-OUTPUT code, text that is not JSON S-TOOL-OUTPUT-JSON; on helix/v1, JSON that is no envelope S-TOOL-OUTPUT-ENVELOPE, an ok envelope answers its output (C-CONTRACT-OUTPUT-SCHEMA if not an object), an error envelope the guest code with its class status, a terminal capability call of a tool allowed none A-AUTH-FORBIDDEN; on extism/v1 the bytes are the output value itself, and an error text that is a taxonomy error object is the guest error, any other S-TOOL-EXTISM-ERROR',
    packs: async (engine) => {
      const outputs = await outputCases();
      if (engine.name !== 'extism') return [{ id: 'fuzz.outputs', module: outputs.helix }];
      const extism = { abi: 'extism/v1', entrypoint: 'run' };
      return [
        { id: 'fuzz.outputs', module: outputs.extism, manifest: extism },
        { id: 'fuzz.errors', module: (await errorCases()).module, manifest: extism },
      ];
    },
    async run(ctx) {
      const { cases } = await outputCases();
      const got: string[] = [];
      for (const [i, c] of cases.entries()) {
        const res = await ctx.call('fuzz.outputs', { i });
        const want = ctx.engine.name === 'extism' ? expectedForExtismOutput(c.bytes) : expectedForOutput(c.bytes);
        const label = `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 160)}`;
        expect(
          res.status === want.status && res.error?.code === want.code,
          `${label}: expected ${want.status} ${want.code ?? ''}, got ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        if (want.status === 'success') expect(JSON.stringify(res.output) === JSON.stringify(want.output), `${label}: the output changed`);
        got.push(want.code ?? 'success');
      }
      ctx.observe('outcomes', tally(got));
      showSample(
        ctx,
        'first 12 outputs',
        cases.slice(0, 12).map((c, i) => `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 200)}`),
      );
      if (ctx.engine.name !== 'extism') return;
      const errors = (await errorCases()).cases;
      const set: string[] = [];
      for (const [i, c] of errors.entries()) {
        const res = await ctx.call('fuzz.errors', { i });
        const want = expectedForExtismError(c.bytes);
        const label = `error case ${i} (${c.what}): ${hex(c.bytes).slice(0, 160)}`;
        expect(
          res.status === want.status && res.error?.code === want.code,
          `${label}: expected ${want.status} ${want.code}, got ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        set.push(want.code);
      }
      ctx.observe('error_outcomes', tally(set));
      showSample(
        ctx,
        'first 8 error texts',
        errors.slice(0, 8).map((c, i) => `error case ${i} (${c.what}): ${hex(c.bytes).slice(0, 200)}`),
      );
    },
  },
  {
    id: 'fuzz.capability-requests',
    title: '50 generated capability requests, valid and mutated in shape or bytes, and 2 at the JSON bounds, each answered by the broker',
    category: 'fuzz',
    abi: ['ABI-CAP-001', 'ABI-CAP-002', 'ABI-JSON-006'],
    engines: ['helix'],
    expected:
      'the guest gets a valid capability answer: I-REQ-ENVELOPE for bytes that are not UTF-8 JSON or not a request envelope, the JSON-bounds code for a breach, A-AUTH-FORBIDDEN for a name it is not allowed, I-REQ-CAPABILITY-ARGS for arguments its schema refuses, else the capability answers; a request too deep ends the run S-TOOL-CAPABILITY-DEPTH',
    packs: async () => [requestPack('fuzz.requests', (await requestCases()).module)],
    policy: (_engine, env) => grantingPolicy(env),
    async run(ctx) {
      const { cases } = await requestCases();
      const got: string[] = [];
      for (const [i, c] of cases.entries()) {
        const res = await ctx.call('fuzz.requests', { i });
        const want = expectedAnswer(c.bytes, ARG_CAPABILITIES);
        const label = `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 160)}`;
        if (want === 'depth') {
          expectOutcome(res, 'terminal_error', 'S-TOOL-CAPABILITY-DEPTH');
          got.push('S-TOOL-CAPABILITY-DEPTH');
          continue;
        }
        expect(
          res.status === 'success',
          `${label}: the guest got no answer: ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        const answer = answerOf(res);
        const code = answer.status === 'ok' ? 'ok' : answer.error.code;
        if (want === 'answered')
          expect(code === 'ok' || (code !== 'I-REQ-CAPABILITY-ARGS' && errorClassOf(code) !== undefined), `${label}: answered ${code}`);
        else expect(code === want, `${label}: answered ${code}, expected ${want}`);
        got.push(code);
      }
      ctx.observe('answers', tally(got));
      showSample(
        ctx,
        'first 12 requests',
        cases.slice(0, 12).map((c, i) => `case ${i} (${c.what}): ${hex(c.bytes).slice(0, 200)}`),
      );
    },
  },
  {
    id: 'fuzz.capability-args',
    title: '50 generated argument sets for allowed and granted capabilities: refused exactly when their schema refuses them',
    category: 'fuzz',
    abi: ['ABI-CAP-005'],
    engines: ['helix'],
    expected:
      'each guest gets an answer: I-REQ-CAPABILITY-ARGS listing violations exactly when the capability schema (or the JSON bounds, inside args) refuses the arguments; otherwise the capability answers, ok or with an error of the taxonomy (http.request reaches only a closed local port)',
    packs: async () => [requestPack('fuzz.args', (await argCases()).module)],
    policy: (_engine, env) => grantingPolicy(env),
    async run(ctx) {
      const { cases } = await argCases();
      const got: string[] = [];
      for (const [i, c] of cases.entries()) {
        const res = await ctx.call('fuzz.args', { i });
        const label = `case ${i}: ${JSON.stringify({ name: c.name, args: c.args }).slice(0, 200)}`;
        expect(
          res.status === 'success',
          `${label}: the guest got no answer: ${res.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`,
        );
        const answer = answerOf(res);
        const code = answer.status === 'ok' ? 'ok' : answer.error.code;
        const violation = scanJsonText(decode(c.bytes)!, { envelope: true });
        const refused = violation !== undefined || !CAPABILITIES.get(c.name)!.args.safeParse(c.args).success;
        if (refused) {
          const want = violation === undefined ? 'I-REQ-CAPABILITY-ARGS' : jsonRefusal(violation, 'capability', '').code;
          expect(code === want, `${label}: answered ${code}, expected ${want}`);
          if (answer.status === 'error' && violation === undefined)
            expect(((answer.error.details.violations ?? []) as unknown[]).length > 0, `${label}: no violations listed`);
        } else {
          expect(
            code !== 'I-REQ-CAPABILITY-ARGS' && (code === 'ok' || errorClassOf(code) !== undefined),
            `${label}: valid arguments answered ${code}`,
          );
        }
        got.push(`${c.name}: ${code}`);
      }
      ctx.observe('answers', tally(got));
      showSample(
        ctx,
        'first 12 argument sets',
        cases.slice(0, 12).map((c) => `${c.name} ${JSON.stringify(c.args).slice(0, 200)}`),
      );
    },
  },
];
