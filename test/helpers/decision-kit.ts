// What the tests of host decisions (ABI-FINAL-*) share: a real host over throwaway toolpacks
// that checks it still serves after each hostile call, and the race behind ABI-FINAL-001's "a
// broker's abort stays the outcome": a broker that aborts the first capability call while the
// caller cancels a few microtasks later, after the abort is known but before the call can end.
import { expect } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../../abi/index.js';
import type { EngineOptions, ExecuteRequest } from '../../host/2-sandbox/engine/engine.js';
import { engineModule } from '../../host/4-calls/tools/wasm-tool.js';
import type { CapabilityBroker, ExecuteResult } from '../../host/2-sandbox/engine/protocol.js';
import { createHost, type Host } from '../../host/index.js';
import { loadToolpacks } from '../../host/4-calls/loader/load-toolpacks.js';
import { loadPolicy } from '../../host/4-calls/policy/load-policy.js';
import { toolpacksDir, tempDir, type ToolpackSpec } from './toolpack.js';

/** A host with the default policy over `specs`, in a temporary home. */
export interface DecisionHost {
  readonly host: Host;
  /** The toolpacks directory. */
  readonly dir: string;
  /** One call through host.call, its envelope checked. */
  call(toolId: string, input?: Record<string, unknown>): Promise<ResponseEnvelope>;
  /** Calls the well-behaved tool with a new input (so it runs, not replays) and expects success. */
  expectServes(): Promise<ResponseEnvelope>;
  close(): Promise<void>;
}

/** Starts a DecisionHost; `wellBehaved` is the id of a tool that succeeds on any object input. */
export async function startDecisionHost(
  specs: readonly ToolpackSpec[],
  wellBehaved: string,
  engine: EngineOptions = {},
): Promise<DecisionHost> {
  const plugins = await toolpacksDir(specs);
  const home = tempDir('helix-home-');
  const host = await createHost({ toolpacksDir: plugins.dir, policy: loadPolicy(undefined), home: home.dir, engine });
  const call = async (toolId: string, input: Record<string, unknown> = {}) =>
    ResponseEnvelopeSchema.parse(await host.call({ tool_id: toolId, input }));
  let probes = 0;
  return {
    host,
    dir: plugins.dir,
    call,
    async expectServes() {
      probes += 1;
      const r = await call(wellBehaved, { probe: probes });
      expect(r.status).toBe('success');
      return r;
    },
    async close() {
      await host.close();
      plugins.cleanup();
      home.cleanup();
    },
  };
}

/** The abort the broker answers with. */
export const RACED_ABORT = {
  kind: 'abort',
  code: 'R-CAP-CALL-LIMIT',
  message: 'The tool made more than 0 capability calls.',
  details: { max_capability_calls: 0 },
} as const;

/** Runs tool `id` (whose first act is a capability call) from `toolpacksDir` once on `engine`, in that race. */
export async function abortThenCancel(
  engine: { execute(request: ExecuteRequest): Promise<ExecuteResult> },
  toolpacksDir: string,
  id: string,
): Promise<ExecuteResult> {
  const loaded = await loadToolpacks(toolpacksDir, loadPolicy(undefined).policy);
  const tool = loaded.tools.find((t) => t.manifest.id === id)!;
  const controller = new AbortController();
  const broker: CapabilityBroker = async () => {
    // The cancel lands three microtasks after the abort: after the host has the abort in hand,
    // before a worker's reply (a macrotask away) or a plugin's end can arrive.
    void Promise.resolve()
      .then(() => undefined)
      .then(() => undefined)
      .then(() => controller.abort());
    return RACED_ABORT;
  };
  const module = engineModule(tool, await tool.module.prepare());
  return engine.execute({ module, input: new TextEncoder().encode('{}'), limits: tool.limits, broker, signal: controller.signal });
}
