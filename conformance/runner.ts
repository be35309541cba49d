// Runs checks against the host: for each check and each engine it applies to, a directory of
// its own (plugins, policy, home, import root), a real host over its toolpacks and the canary,
// the check's body, and then the survival probe: the canary called on the same host. It records
// the evidence (calls with status, code, fuel and time; peak host memory; notes) and the sources.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { isHelixError, ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { createHost, type Host } from '../host/5-host/host.js';
import { defaultPolicyDocument, loadPolicy } from '../host/5-host/toolpacks.js';
import { CheckFailure, type CallEvidence, type Check, type CheckContext, type CheckEnv, type Engine, type Source } from './check.js';
import { adapterFor } from './engines/index.js';
import { compileGuest, guestSourcePath } from './kit/as-guest.js';
import { CANARY_ID } from './kit/canary.js';
import { writeToolpack, type ToolpackSpec } from './kit/toolpack.js';
import { serviceState } from './outside-engines.js';

/** The verdict of one check on one engine. */
export type Verdict = 'pass' | 'fail';

/** What the host did, as the runner measured it. */
export interface Evidence {
  readonly durationMs: number;
  /** Peak resident memory of this process (host, workers and all) above its level when the check began. */
  readonly peakRssDeltaBytes: number;
  /** Most fuel any call of the check reported. */
  readonly fuelUsed: number | null;
  readonly calls: readonly CallEvidence[];
  readonly notes: readonly string[];
  readonly observations: Readonly<Record<string, unknown>>;
  /** The canary's call after the check, on the same host. */
  readonly survival: { readonly ok: boolean; readonly durationMs: number; readonly detail: string };
}

/** One check's result on one engine. */
export interface CheckResult {
  readonly id: string;
  readonly title: string;
  readonly category: Check['category'];
  readonly abi: readonly string[];
  readonly engine: Engine;
  readonly expected: string;
  readonly verdict: Verdict;
  /** Why it failed. */
  readonly failure?: string;
  readonly evidence: Evidence;
  readonly sources: readonly Source[];
}

/** Options of runChecks. */
export interface RunOptions {
  /** Engines to run on (default all a check applies to). */
  readonly engines?: readonly Engine[];
  /** Called as each result is known. */
  readonly onResult?: (result: CheckResult) => void;
  /** Where the checks' directories go; default the OS temp dir. */
  readonly tmp?: string;
}

/** The selected checks, each on each selected engine it applies to, one after another. */
export async function runChecks(checks: readonly Check[], options: RunOptions = {}): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    for (const engine of check.engines) {
      if (options.engines !== undefined && !options.engines.includes(engine)) continue;
      const result = await runOne(check, engine, options.tmp ?? tmpdir());
      results.push(result);
      options.onResult?.(result);
    }
  }
  return results;
}

/** The policy a check's host runs under when the check names none: the default, rooted in the check's directory. */
export function checkDefaultPolicy(env: CheckEnv): Record<string, unknown> {
  return { ...defaultPolicyDocument(), paths: { importRoots: [env.importRoot], exportRoots: [path.join(env.dir, 'export')] } };
}

async function runOne(check: Check, engine: Engine, tmp: string): Promise<CheckResult> {
  const adapter = adapterFor(engine);
  const dir = mkdtempSync(path.join(tmp, `helix-conformance-${check.id.replace(/[^a-z0-9-]/gi, '_')}-`));
  const env: CheckEnv = { dir, importRoot: path.join(dir, 'import') };
  mkdirSync(env.importRoot);
  mkdirSync(path.join(dir, 'export'));
  const sources: Source[] = [];
  const calls: CallEvidence[] = [];
  const notes: string[] = [];
  const observations: Record<string, unknown> = {};
  const cleanups: (() => Promise<void> | void)[] = [];
  let host: Host | undefined;
  let starting: Promise<Host> | undefined;
  let plugins: Promise<string> | undefined;

  const memory = peakSampler();
  const started = performance.now();

  const writeToolpacks = (): Promise<string> =>
    (plugins ??= (async () => {
      const root = path.join(dir, 'plugins');
      mkdirSync(root);
      const packs = [...((await check.packs?.(adapter)) ?? []), { ...adapter.canary(), dirName: '_canary' }];
      for (const pack of packs) {
        let spec: ToolpackSpec = pack;
        if ('guest' in pack && typeof pack.guest === 'string') {
          spec = { ...pack, module: await compileGuest(pack.guest) };
          if (!sources.some((s) => s.label === pack.guest))
            sources.push({ label: pack.guest, lang: 'assemblyscript', text: readFileSync(guestSourcePath(pack.guest), 'utf8') });
        } else if (typeof pack.module === 'string' && pack.id !== CANARY_ID) {
          sources.push({ label: `${pack.id} (module)`, lang: 'wat', text: pack.module.trim() });
        }
        const { manifestPath } = await writeToolpack(root, spec);
        if (pack.id !== CANARY_ID && pack.manifest !== undefined)
          sources.push({ label: `${pack.id} (manifest fields)`, lang: 'yaml', text: stringify(pack.manifest) });
        for (const [name, content] of Object.entries(('extraFiles' in pack ? pack.extraFiles : undefined) ?? {})) {
          const target = path.join(path.dirname(manifestPath), name);
          mkdirSync(path.dirname(target), { recursive: true });
          writeFileSync(target, content);
        }
      }
      return root;
    })());

  const policyFile = (): string => {
    const file = path.join(dir, 'policy.yaml');
    const doc = check.policy?.(adapter, env) ?? checkDefaultPolicy(env);
    const text = stringify(doc);
    writeFileSync(file, text);
    if (check.policy !== undefined && !sources.some((s) => s.label === 'policy')) sources.push({ label: 'policy', lang: 'yaml', text });
    return file;
  };

  const startHost = async (): Promise<Host> => {
    const toolpacksDir = await writeToolpacks();
    return createHost({
      toolpacksDir,
      policyFile: policyFile(),
      home: path.join(dir, 'home'),
      warn: (line) => notes.push(`host warning: ${line}`),
    });
  };

  const ctx: CheckContext = {
    engine: adapter,
    env,
    host: () => (starting ??= startHost().then((h) => (host = h))),
    async refusedStart() {
      try {
        const h = await startHost();
        host = h;
        throw new CheckFailure('the host started; it had to refuse');
      } catch (e) {
        if (e instanceof CheckFailure) throw e;
        if (!isHelixError(e)) throw e;
        notes.push(`host refused to start: ${describeError(e)}`);
        return { code: e.code, message: e.message, hint: e.hint, details: e.details };
      }
    },
    async call(tool, input = {}, options = {}) {
      const h = await ctx.host();
      const t0 = performance.now();
      const r = ResponseEnvelopeSchema.parse(
        await h.call({ tool_id: tool, input, ...options.request } as never, options.signal === undefined ? {} : { signal: options.signal }),
      );
      calls.push(callEvidence(tool, r, performance.now() - t0));
      return r;
    },
    toolpacksDir: writeToolpacks,
    note: (text) => void notes.push(text),
    observe: (key, value) => {
      observations[key] = value;
    },
    show: (source) => void sources.push(source),
    defer: (cleanup) => void cleanups.push(cleanup),
  };

  let failure: string | undefined;
  const missing = await missingServices(check);
  if (missing !== undefined) failure = missing;
  else {
    try {
      await check.run(ctx);
    } catch (e) {
      failure = e instanceof CheckFailure ? e.message : `the check could not run: ${describeError(e)}`;
    }
  }
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch (e) {
      notes.push(`clean-up failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const durationMs = performance.now() - started;
  if (host === undefined && starting !== undefined) await starting.catch(() => undefined);
  const probed =
    missing === undefined
      ? await survive(check, engine, dir, host)
      : { survival: { ok: true, durationMs: 0, detail: 'not probed: the check did not run' } };
  const survival = probed.survival;
  if (survival.ok === false && failure === undefined) failure = `the host did not survive: ${survival.detail}`;
  const peakRssDeltaBytes = memory.stop();
  for (const h of [host, probed.extra]) await h?.close().catch((e: unknown) => notes.push(`closing a host failed: ${String(e)}`));
  rmSync(dir, { recursive: true, force: true });
  const fuel = calls.map((c) => c.fuelUsed ?? 0);
  return {
    id: check.id,
    title: check.title,
    category: check.category,
    abi: check.abi,
    engine,
    expected: check.expected,
    verdict: failure === undefined ? 'pass' : 'fail',
    ...(failure === undefined ? {} : { failure }),
    evidence: {
      durationMs: round(durationMs),
      peakRssDeltaBytes,
      fuelUsed: fuel.length === 0 ? null : Math.max(...fuel),
      calls,
      notes,
      observations,
      survival,
    },
    sources,
  };
}

/**
 * The canary on the check's host; when the check's host never started (a refused start), on a
 * new host of the canary alone in the same process and home, to show the refusal harmed neither.
 */
async function survive(
  check: Check,
  engine: Engine,
  dir: string,
  host: Host | undefined,
): Promise<{ survival: Evidence['survival']; extra?: Host }> {
  const t0 = performance.now();
  let target = host;
  let extra: Host | undefined;
  try {
    if (target === undefined) {
      const root = path.join(dir, 'plugins-canary');
      mkdirSync(root, { recursive: true });
      await writeToolpack(root, adapterFor(engine).canary());
      extra = target = await createHost({
        toolpacksDir: root,
        policy: loadPolicy(undefined),
        home: path.join(dir, 'home'),
        warn: () => undefined,
      });
    }
    const probe = { probe: `survival of ${check.id} on ${engine}`, at: Date.now(), nonce: Math.random() };
    const r = ResponseEnvelopeSchema.parse(await target.call({ tool_id: CANARY_ID, input: probe }));
    const ok = r.status === 'success' && r.replayed === false && JSON.stringify(r.output) === JSON.stringify(probe);
    const where = host === undefined ? 'a new host in the same process and home' : 'the same host';
    const detail = ok ? `the canary answered on ${where}` : `the canary answered ${r.status} ${r.error?.code ?? ''} on ${where}`;
    return { survival: { ok, durationMs: round(performance.now() - t0), detail }, ...(extra === undefined ? {} : { extra }) };
  } catch (e) {
    return {
      survival: { ok: false, durationMs: round(performance.now() - t0), detail: `the canary could not be called: ${describeError(e)}` },
      ...(extra === undefined ? {} : { extra }),
    };
  }
}

/** An error as one paragraph: a HelixError's code, message and details; else the stack. */
export function describeError(e: unknown): string {
  if (isHelixError(e)) {
    const details = Object.keys(e.details).length === 0 ? '' : ` ${JSON.stringify(e.details).slice(0, 2000)}`;
    return `${e.code}: ${e.message}${details}`;
  }
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

async function missingServices(check: Check): Promise<string | undefined> {
  for (const s of check.services ?? []) {
    const state = await serviceState(s);
    if (!state.ok) return state.problem;
  }
  return undefined;
}

function callEvidence(tool: string, r: ResponseEnvelope, durationMs: number): CallEvidence {
  return {
    tool,
    status: r.status,
    ...(r.error === undefined ? {} : { code: r.error.code, message: r.error.message.slice(0, 300) }),
    fuelUsed: r.metrics.fuel_used,
    memoryPeakPages: r.metrics.memory_peak_pages,
    durationMs: round(durationMs),
    replayed: r.replayed,
  };
}

/** Samples this process's resident memory every 5 ms; stop() gives the peak above the first sample. */
function peakSampler(): { stop(): number } {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return peak - base;
    },
  };
}

const round = (ms: number): number => Math.round(ms * 10) / 10;
