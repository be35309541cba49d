// What a conformance check is: the requirement ids of abi/ABI.md it backs, the engines it runs
// on, the toolpacks it loads (their sources go into the report), the outcome it expects in
// words, and a body that drives the real host and fails with a CheckFailure when the host does
// not hold the requirement. The runner (runner.ts) measures every check and proves after each
// one that the same host still serves a well-behaved call.
import type { ResponseEnvelope } from '../abi/index.js';
import type { Host } from '../host/5-host/host.js';
import type { ToolpackSpec } from './kit/toolpack.js';

/**
 * The engines a check can run on: `helix` runs helix/v1 modules on Helix's own metered engine,
 * `extism` runs extism/v1 plugins on the engine's Extism kernel, `container` covers the work
 * Helix hands to a real outside engine (container toolpacks and `docker.run` on Docker, the
 * `slurm.*` capabilities on a Slurm cluster).
 */
export const ENGINES = ['helix', 'extism', 'container'] as const;
export type Engine = (typeof ENGINES)[number];

/** The report's sections, in this order. */
export const CATEGORIES = [
  'module',
  'cpu',
  'memory',
  'io',
  'decisions',
  'capabilities',
  'privileged',
  'artifacts',
  'files',
  'secrets',
  'identity',
  'store',
  'isolation',
  'mcp',
  'fuzz',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** What a category covers, for the report's headings. */
export const CATEGORY_TITLES: Record<Category, string> = {
  module: 'Module shape and imports',
  cpu: 'CPU: fuel, deadlines and the shapes of code that try to escape them',
  memory: 'Memory: initial size, growth, data segments, tables, several memories',
  io: 'Input and output across the ABI',
  decisions: 'Host decisions a guest tries to catch',
  capabilities: 'Capabilities: allowlist, scopes, arguments, storms, payloads',
  privileged: 'Docker and Slurm: privileged capabilities and container toolpacks',
  artifacts: 'Artifacts and import boundaries',
  files: 'Toolpack and policy files',
  secrets: 'Secrets: every path a guest could write one to',
  identity: 'Run identity, replay and verify',
  store: 'The store: damaged, tampered and concurrent',
  isolation: 'Isolation between calls and between tools',
  mcp: 'The MCP transport under broken frames',
  fuzz: 'Cases found by property-based fuzzing',
};

/** Services a check needs running; the runner fails the check with a clear hint when one is not. */
export type Service = 'docker' | 'slurm';

/** The policy a check's host runs under, as a document (the runner writes it to a file). */
export type PolicyDocument = Record<string, unknown>;

/** A source shown in the report: a module's WAT or AssemblyScript, a request, a frame. */
export interface Source {
  readonly label: string;
  readonly lang: 'wat' | 'assemblyscript' | 'json' | 'yaml' | 'text';
  readonly text: string;
}

/** One check. */
export interface Check {
  /** Stable id, `<category>.<name>`: what `--only` selects and a reviewer cites. */
  readonly id: string;
  readonly title: string;
  readonly category: Category;
  /** The ABI.md requirement ids this check backs. */
  readonly abi: readonly string[];
  readonly engines: readonly Engine[];
  /** The outcome the host must give, in words (status, code, bounds). */
  readonly expected: string;
  readonly services?: readonly Service[];
  /** The toolpacks the check's host loads on an engine, besides the canary. */
  packs?(engine: Engine): readonly PackSpec[] | Promise<readonly PackSpec[]>;
  /** The policy of the check's host (default: the bundled default policy). */
  policy?(engine: Engine, env: CheckEnv): PolicyDocument;
  run(ctx: CheckContext): Promise<void>;
}

/** A toolpack a check loads: the kit's spec, with the text of the module for the report. */
export interface PackSpec extends ToolpackSpec {
  /** AssemblyScript guest under conformance/assembly (instead of `module`'s WAT). */
  readonly guest?: string;
  /** Where the pack's directory goes: default the check's plugins directory. */
  readonly extraFiles?: Readonly<Record<string, string | Uint8Array>>;
}

/** What a check's policy may refer to. */
export interface CheckEnv {
  /** A directory of the check's own, removed afterwards. */
  readonly dir: string;
  /** The directory artifact imports may read from (the policy's import root in the default policy of a check). */
  readonly importRoot: string;
}

/** One call's evidence. */
export interface CallEvidence {
  readonly tool: string;
  readonly status: ResponseEnvelope['status'];
  readonly code?: string;
  readonly message?: string;
  readonly fuelUsed?: number;
  readonly memoryPeakPages?: number;
  readonly durationMs: number;
  readonly replayed?: boolean;
}

/** The host a check runs against, and what the check can do with it. */
export interface CheckContext {
  readonly engine: Engine;
  readonly env: CheckEnv;
  /** The started host over the check's packs, the canary and its policy (started on first use). */
  host(): Promise<Host>;
  /** Starts the host expecting it to refuse: the refusal, or a CheckFailure when it started. */
  refusedStart(): Promise<{ code: string; message: string; hint?: string; details: Record<string, unknown> }>;
  /** One call through host.call, recorded as evidence. */
  call(tool: string, input?: unknown, options?: { signal?: AbortSignal; request?: Record<string, unknown> }): Promise<ResponseEnvelope>;
  /** The plugins directory the host loads. */
  pluginsDir(): Promise<string>;
  /** A line of evidence. */
  note(text: string): void;
  /** A named observation (a size, a count, a code). */
  observe(key: string, value: unknown): void;
  /** A source shown with the check (a request, a frame, a file). */
  show(source: Source): void;
  /** Runs when the check ends, pass or fail (before the host closes). */
  defer(cleanup: () => Promise<void> | void): void;
}

/** A check's verdict against the host: the requirement does not hold. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
}

/** Fails the check with `message` unless `condition`. */
export function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message);
}

/** The error code of a response, or undefined for success. */
export function codeOf(r: ResponseEnvelope): string | undefined {
  return r.error?.code;
}

/** Fails unless the response has `status` (and `code`, when given). */
export function expectOutcome(r: ResponseEnvelope, status: ResponseEnvelope['status'], code?: string): void {
  const got = `${r.status}${r.error === null || r.error === undefined ? '' : ` ${r.error.code}: ${r.error.message}`}`;
  if (r.status !== status || (code !== undefined && r.error?.code !== code)) {
    throw new CheckFailure(`expected ${status}${code === undefined ? '' : ` ${code}`}, got ${got}`);
  }
}

/** Fails unless the call succeeded; returns its output. */
export function expectSuccess(r: ResponseEnvelope): Record<string, unknown> {
  expectOutcome(r, 'success');
  return (r.output ?? {}) as Record<string, unknown>;
}
