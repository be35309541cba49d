// createHost: loads the policy and every toolpack (fail-closed), starts the engine, and serves
// calls. The CLI, the MCP server and embedders all go through this one object.
import type { ResponseEnvelope } from '../abi/index.js';
import { performCall } from './call.js';
import { createEngine, type Engine, type EngineOptions } from './engine/engine.js';
import { HelixError } from './errors.js';
import { loadToolpacksOrThrow, type LoadedTool } from './loader/load-toolpacks.js';
import { bundledPluginsDir } from './paths.js';
import { loadPolicy, type LoadedPolicy } from './policy/load-policy.js';
import { ToolRegistry } from './registry.js';
import { errorResponse, ZERO_METRICS } from './response.js';

/** Options of createHost; everything has a default. */
export interface HostOptions {
  /** Directory searched for `*.tool.yaml`; default the bundled `plugins/`. */
  readonly pluginsDir?: string;
  /** Policy file; default the bundled default policy. Ignored when `policy` is given. */
  readonly policyFile?: string;
  /** An already loaded policy. */
  readonly policy?: LoadedPolicy;
  readonly engine?: EngineOptions;
  /** Wall clock, ms since the epoch; default Date.now. */
  readonly now?: () => number;
}

/** A running host. */
export interface Host {
  readonly policy: LoadedPolicy;
  readonly pluginsDir: string;
  /** Loaded tools, by id then newest version first. */
  tools(): readonly LoadedTool[];
  /** Performs a call; always resolves with exactly one response envelope. */
  call(request: unknown): Promise<ResponseEnvelope>;
  /** Stops the workers; later calls get P-PRECOND-HOST-CLOSED. */
  close(): Promise<void>;
}

/** Loads policy and toolpacks and starts the engine. Throws HelixError if anything is invalid. */
export async function createHost(options: HostOptions = {}): Promise<Host> {
  const policy = options.policy ?? loadPolicy(options.policyFile);
  const pluginsDir = options.pluginsDir ?? bundledPluginsDir();
  const tools = await loadToolpacksOrThrow(pluginsDir, policy.policy);
  const registry = new ToolRegistry(tools);
  const engine: Engine = createEngine(options.engine);
  const ctx = { registry, policy, engine, now: options.now ?? Date.now };
  let closed = false;
  return {
    policy,
    pluginsDir,
    tools: () => registry.list(),
    async call(request) {
      if (closed) {
        const err = new HelixError('P-PRECOND-HOST-CLOSED');
        return errorResponse('', err.toWire(), ZERO_METRICS, { tool_id: '', tool_version: '', digest: null });
      }
      return performCall(ctx, request);
    },
    async close() {
      if (closed) return;
      closed = true;
      await engine.close();
    },
  };
}
