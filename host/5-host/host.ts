// createHost: loads the policy and every toolpack (fail-closed), opens the store (marking runs
// a dead process left running as interrupted, and, when the policy grants docker.run, sweeping the
// containers and workspaces a crash left), starts the engine, and serves calls. The CLI, the MCP
// server and embedders all go through this one object.
import type { ResponseEnvelope } from '../../abi/index.js';
import { performCall, type CallOptions } from '../4-calls/call.js';
import { createEngine, type Engine, type EngineOptions, type EngineStats } from '../2-sandbox/engine/engine.js';

export type { EngineOptions, EngineStats } from '../2-sandbox/engine/engine.js';
import { HelixError } from '../../abi/index.js';
import { canonicalJson } from '../1-base/hashing.js';
import { hostJobs, type HostJobs } from './host-jobs.js';
import {
  hostArtifacts,
  hostAudit,
  hostModules,
  hostRuns,
  type HostArtifacts,
  type HostAudit,
  type HostModules,
  type HostRuns,
} from './host-records.js';
import { storeLoaderCache } from '../4-calls/loader/loader-cache.js';
import type { LoadedContainer } from '../4-calls/loader/load-container.js';
import { loadEveryToolpackOrThrow, type LoadedTool } from '../4-calls/loader/load-toolpacks.js';
import { bundledToolpacksDir } from '../1-base/paths.js';
import { loadPolicy, type LoadedPolicy } from '../4-calls/policy/load-policy.js';
import { ToolRegistry } from '../4-calls/registry.js';
import { errorResponse, ZERO_METRICS } from '../1-base/response.js';
import { RunCoordinator } from '../4-calls/runs/coordinator.js';
import { recoverInterrupted } from '../4-calls/runs/run-store.js';
import { recordModules } from '../3-store/modules.js';
import { sweepDockerLeftovers, type DockerSweep } from './docker-leftovers.js';
import { storeDiagnostics, type StoreDiagnostics } from '../3-store/diagnostics.js';
import { openStore, resolveHome, type Store } from '../3-store/open-store.js';
import { builtinTools } from '../4-calls/tools/builtins.js';
import type { Tool } from '../4-calls/tools/tool.js';
import { wasmTool } from '../4-calls/tools/wasm-tool.js';
import { containerOffer, containerTool } from '../4-calls/tools/container-tool.js';

/** Options of createHost; everything has a default. */
export interface HostOptions {
  /** Directory searched for `*.tool.yaml`; default the bundled toolpacks (`plugins/` of the package). */
  readonly toolpacksDir?: string;
  /** @deprecated The former name of `toolpacksDir`, still read when `toolpacksDir` is not given. */
  readonly pluginsDir?: string;
  /** Policy file; default the bundled default policy. Ignored when `policy` is given. */
  readonly policyFile?: string;
  /** An already loaded policy. */
  readonly policy?: LoadedPolicy;
  /** The Helix home holding the store; default `HELIX_HOME`, else `./.helix`. */
  readonly home?: string;
  readonly engine?: EngineOptions;
  /**
   * Toolpacks loaded under this policy, with their engine and tools (createHostParts); the
   * caller closes the engine, `close` leaves it running. Default: load `toolpacksDir`, start an
   * engine. Lets `helix test` give each fixture a fresh store without loading and compiling again.
   */
  readonly shared?: HostParts;
  /** Wall clock, ms since the epoch; default Date.now. */
  readonly now?: () => number;
  /** How often a running call reports progress to a caller that asked for it, ms; default 1000. */
  readonly progressIntervalMs?: number;
  /** Receives the host's warnings (a Docker engine that does not answer the sweep of leftovers); default stderr. */
  readonly warn?: (line: string) => void;
}

/** A running host. */
export interface Host {
  readonly policy: LoadedPolicy;
  /** The directory the host's toolpacks were loaded from. */
  readonly toolpacksDir: string;
  /** @deprecated The former name of `toolpacksDir`. */
  readonly pluginsDir: string;
  /** The Helix home holding the store. */
  readonly home: string;
  /** The store's file. */
  readonly storePath: string;
  /** The store's artifacts: get, list, read, import, export. */
  readonly artifacts: HostArtifacts;
  /** The store's runs: get, list, show, events, journal, refused calls, verify, RO-Crate export. */
  readonly runs: HostRuns;
  /** The store's audit trail. */
  readonly audit: HostAudit;
  /** What the store records of the modules it has loaded. */
  readonly modules: HostModules;
  /**
   * The store's diagnostic face (host/3-store/diagnostics.ts), for security reviewers' checks and
   * repair tools: records as stored, planted damage, gc in process. It bypasses the typed
   * operations on purpose; nothing that serves calls needs it.
   */
  readonly diagnostics: StoreDiagnostics;
  /** Fan-out on the store: job bundles written, checked and run, their results collected (abi/ABI.md, "Fan-out"). */
  readonly jobs: HostJobs;
  /** Runs found `running` from a dead process at startup, now marked interrupted. */
  readonly interrupted: readonly string[];
  /** The sweep of Docker leftovers begun at start, when the policy grants docker.run to some tool (ABI-DOCKER-007). */
  readonly dockerSweep: Promise<DockerSweep> | undefined;
  /** Callable tools (toolpacks and built-ins), by id then newest version first. */
  tools(): readonly Tool[];
  /** Performs a call; always resolves with exactly one response envelope. */
  call(request: unknown, options?: CallOptions): Promise<ResponseEnvelope>;
  /** What the engine and its idle workers hold (compiled variants, kept instances), for tests and diagnostics. */
  engineStats(): Promise<EngineStats>;
  /** Stops the workers and closes the store; later calls get P-PRECOND-HOST-CLOSED. */
  close(): Promise<void>;
}

/** What hosts over different stores can share: the packs loaded under one policy, an engine, the tools bound to it. */
export interface HostParts {
  readonly toolpacks: readonly LoadedTool[];
  /** Container toolpacks loaded, whether or not the policy offers them. */
  readonly containers: readonly LoadedContainer[];
  readonly engine: Engine;
  readonly tools: readonly Tool[];
}

/** Loads the toolpacks under `policy` and starts an engine, for hosts that share them; the caller closes `engine`. */
export async function createHostParts(policy: LoadedPolicy, toolpacksDir: string, engine?: EngineOptions): Promise<HostParts> {
  const { tools, containers } = await loadEveryToolpackOrThrow(toolpacksDir, policy.policy);
  return bindTools(policy, tools, containers, createEngine(engine));
}

function bindTools(
  policy: LoadedPolicy,
  toolpacks: readonly LoadedTool[],
  containers: readonly LoadedContainer[],
  engine: Engine,
): HostParts {
  // A container toolpack is offered only when the policy grants all it needs (ABI-CONTAINER-002).
  const offered = containers.flatMap((c) => {
    const offer = containerOffer(c, policy.policy);
    return 'image' in offer ? [containerTool(c, offer.image)] : [];
  });
  return {
    toolpacks,
    containers,
    engine,
    tools: [...toolpacks.map((t) => wasmTool(t, engine)), ...offered, ...builtinTools(policy.policy)],
  };
}

/** Loads policy and toolpacks, opens the store and starts the engine. Throws HelixError if anything is invalid. */
export async function createHost(options: HostOptions = {}): Promise<Host> {
  const policy = options.policy ?? loadPolicy(options.policyFile);
  const toolpacksDir = options.toolpacksDir ?? options.pluginsDir ?? bundledToolpacksDir();
  const now = options.now ?? Date.now;
  // The store first: its load cache spares this start what an earlier one checked (ABI-LOAD-008).
  const store = openStore(resolveHome(options.home));
  let interrupted: string[];
  let loaded: readonly LoadedTool[];
  let containers: readonly LoadedContainer[];
  // The engine's first worker thread starts now, while the toolpacks load: it takes a few hundred
  // milliseconds to come up, which would otherwise come before the first call's run.
  const ownEngine = options.shared === undefined ? createEngine(options.engine) : undefined;
  try {
    ({ tools: loaded, containers } =
      options.shared === undefined
        ? await loadEveryToolpackOrThrow(toolpacksDir, policy.policy, { cache: storeLoaderCache(store, now) })
        : { tools: options.shared.toolpacks, containers: options.shared.containers });
    interrupted = await recoverInterrupted(store, now());
    await recordModules(store, loaded, now());
  } catch (err) {
    await ownEngine?.close();
    await store.close();
    throw err;
  }
  // Beside the recovery of interrupted runs: the containers and workspaces a crash left (ABI-DOCKER-007).
  const dockerSweep = sweepDockerLeftovers(policy.policy, options.warn);
  const { engine, tools } = options.shared ?? bindTools(policy, loaded, containers, ownEngine!);
  const registry = new ToolRegistry(tools);
  const ctx = {
    registry,
    policy,
    canonicalPolicy: canonicalJson(policy.policy),
    store,
    coordinator: new RunCoordinator(store, now),
    now,
    progressIntervalMs: options.progressIntervalMs ?? 1000,
  };
  let closed = false;
  let pending = 0;
  let drained: (() => void) | undefined;
  const host: Host = {
    policy,
    toolpacksDir,
    pluginsDir: toolpacksDir,
    home: store.home,
    storePath: store.path,
    artifacts: hostArtifacts(store, policy.policy),
    runs: hostRuns(store),
    audit: hostAudit(store),
    modules: hostModules(store),
    diagnostics: storeDiagnostics(store),
    jobs: hostJobs(store, {
      policy,
      toolpacksDir,
      home: store.home,
      call: (request, callOptions) => host.call(request, callOptions),
      tools: () => registry.list(),
    }),
    interrupted,
    dockerSweep,
    tools: () => registry.list(),
    engineStats: () => engine.stats(),
    async call(request, options) {
      if (closed) {
        const err = new HelixError('P-PRECOND-HOST-CLOSED');
        return errorResponse('', err.toWire(), ZERO_METRICS, { tool_id: '', tool_version: '', digest: null });
      }
      pending += 1;
      try {
        return await performCall(ctx, request, options);
      } finally {
        pending -= 1;
        if (pending === 0) drained?.();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      // Let calls in flight record their runs before the store closes.
      if (pending > 0) await new Promise<void>((resolve) => (drained = resolve));
      await dockerSweep;
      if (options.shared === undefined) await engine.close();
      await store.close();
    },
  };
  stores.set(host, store);
  return host;
}

/** Each host's store, kept off the Host so that callers above it go through its typed reads. */
const stores = new WeakMap<Host, Store>();

/**
 * The store under `host`, for the host's own tests and diagnostics that read what the typed
 * reads do not offer (journal, audit, the file itself). Not part of the package API
 * (host/index.ts); throws for an object createHost did not make.
 */
export function hostStore(host: Host): Store {
  const store = stores.get(host);
  if (store === undefined) throw new Error('hostStore: not a host made by createHost');
  return store;
}
