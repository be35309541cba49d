// What a conformance check is: the requirement ids of abi/ABI.md it backs, the engines it runs
// on, the toolpacks it loads (their sources go into the report), the outcome it expects in
// words, and a body that drives the real host and fails with a CheckFailure when the host does
// not hold the requirement. The runner (runner.ts) measures every check and proves after each
// one that the same host still serves a well-behaved call. A check takes its engine as a parameter:
// the engine's adapter (engines/), which holds everything that differs between engines.
import type { ResponseEnvelope } from '../abi/index.js';
import type { Host } from '../host/5-host/host.js';
import type { Engine, EngineAdapter } from './engines/adapter.js';
import type { PackSpec } from './kit/toolpack.js';

export { ENGINES, type Engine, type EngineAdapter, type GuestAbi } from './engines/adapter.js';
export { CheckFailure, codeOf, expect, expectOutcome, expectSuccess } from './expect.js';
export type { PackSpec } from './kit/toolpack.js';

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
  packs?(engine: EngineAdapter): readonly PackSpec[] | Promise<readonly PackSpec[]>;
  /** The policy of the check's host (default: the bundled default policy). */
  policy?(engine: EngineAdapter, env: CheckEnv): PolicyDocument;
  run(ctx: CheckContext): Promise<void>;
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
  /** The engine the check runs on, and what differs on it. */
  readonly engine: EngineAdapter;
  readonly env: CheckEnv;
  /** The started host over the check's packs, the canary and its policy (started on first use). */
  host(): Promise<Host>;
  /** Starts the host expecting it to refuse: the refusal, or a CheckFailure when it started. */
  refusedStart(): Promise<{ code: string; message: string; hint?: string; details: Record<string, unknown> }>;
  /** One call through host.call, recorded as evidence. */
  call(tool: string, input?: unknown, options?: { signal?: AbortSignal; request?: Record<string, unknown> }): Promise<ResponseEnvelope>;
  /** The toolpacks directory the host loads. */
  toolpacksDir(): Promise<string>;
  /** A line of evidence. */
  note(text: string): void;
  /** A named observation (a size, a count, a code). */
  observe(key: string, value: unknown): void;
  /** A source shown with the check (a request, a frame, a file). */
  show(source: Source): void;
  /** Runs when the check ends, pass or fail (before the host closes). */
  defer(cleanup: () => Promise<void> | void): void;
}
