// A WebAssembly toolpack as a Tool: its manifest is the descriptor, the engine runs it, and a
// broker per run answers its capability calls (and a terminal capability_call output).
import { DEFAULT_ENTRYPOINT, ERROR_CODES, type GuestOutput, isHelixError } from '../../../abi/index.js';
import { createBroker } from '../broker/broker.js';
import { RunOutputs } from '../broker/outputs.js';
import type { Engine, EngineModule } from '../../2-sandbox/engine/engine.js';
import type { PreparedModule } from '../../2-sandbox/modules/module-pipeline.js';
import type { LoadedTool } from '../loader/load-toolpacks.js';
import { contractDigest } from './contract-digest.js';
import type { Tool, ToolOutcome } from './tool.js';

/** A Tool over a loaded toolpack, executed by `engine`. */
export interface WasmTool extends Tool {
  readonly kind: 'wasm';
  readonly loaded: LoadedTool;
}

/** Wraps a loaded toolpack. */
export function wasmTool(loaded: LoadedTool, engine: Engine): WasmTool {
  const m = loaded.manifest;
  // Compiled on the first call, not at load (ABI-LOAD-008): a CLI call compiles only its tool.
  let module: EngineModule | undefined;
  return {
    kind: 'wasm',
    loaded,
    id: m.id,
    version: m.version,
    contractVersion: m.contractVersion,
    description: m.description,
    deterministic: m.deterministic,
    entrypoint: m.entrypoint ?? DEFAULT_ENTRYPOINT,
    capabilities: m.capabilities.allow,
    moduleDigest: m.digest,
    // Once per load: an edit of the manifest or a schema file makes the next call a new run.
    contractDigest: contractDigest(m, loaded.inputSchema, loaded.outputSchema),
    limits: loaded.limits,
    // The cap bounds all memories together (ABI-ALLOC-004): the module needs their initial sum.
    minMemoryPages: loaded.module.info.memories.reduce((sum, mem) => sum + (mem.imported ? 0 : mem.initial), 0),
    inputSchema: loaded.inputSchema,
    outputSchema: loaded.outputSchema,
    validateInput: loaded.validateInputRefs,
    validateOutput: loaded.validateOutput,
    async execute(ctx): Promise<ToolOutcome> {
      if (module === undefined) {
        try {
          module = engineModule(loaded, await loaded.module.prepare());
        } catch (err) {
          // The engine refused the module: the call fails before any of it runs.
          if (!isHelixError(err)) throw err;
          return { kind: 'fault', error: err.toWire(), fuelUsed: 0, memoryPages: 0 };
        }
      }
      const outputs = new RunOutputs(ctx.store, ctx.runId, m.declaredOutputs, ctx.policy.policy.ceilings.maxImportBytes);
      const broker = createBroker({
        store: ctx.store,
        policy: ctx.policy.policy,
        toolId: m.id,
        allow: m.capabilities.allow,
        network: m.capabilities.network,
        runId: ctx.runId,
        deadlineMs: ctx.deadlineMs,
        signal: ctx.signal,
        maxCapabilityCalls: ctx.limits.maxCapabilityCalls,
        outputs,
        ...(ctx.onLog === undefined ? {} : { onLog: ctx.onLog }),
        ...(ctx.onCapabilityCall === undefined ? {} : { onCall: ctx.onCapabilityCall }),
      });
      const result = await engine.execute({
        module,
        input: ctx.inputBytes,
        limits: ctx.limits,
        broker: broker.handle,
        ...(ctx.cancel === undefined ? {} : { signal: ctx.cancel }),
      });
      if (result.kind === 'fault') {
        return {
          kind: 'fault',
          error: { code: result.code, message: result.message, details: result.details, hint: ERROR_CODES[result.code].hint },
          fuelUsed: result.fuelUsed,
          memoryPages: result.memoryPages,
          effects: broker.finish(),
        };
      }
      let output: GuestOutput = result.output;
      if (output.status === 'capability_call') {
        // A terminal capability_call (ABI-OUTPUT-002): the host performs the call, under the same rules, as the tool's last act.
        const call = await broker.terminal(output.capability_call.name, output.capability_call.args);
        output = call.ok ? { status: 'ok', output: call.result } : { status: 'error', error: call.error };
      }
      return {
        kind: 'output',
        output,
        outputSha256: result.outputSha256,
        fuelUsed: result.fuelUsed,
        memoryPages: result.memoryPages,
        effects: broker.finish(),
      };
    },
  };
}

/** The engine's view of a loaded toolpack, once its module is prepared (`tool.module.prepare()`). */
export function engineModule(tool: LoadedTool, prepared: PreparedModule): EngineModule {
  return {
    digest: tool.manifest.digest,
    abi: tool.manifest.abi,
    entrypoint: tool.manifest.entrypoint ?? DEFAULT_ENTRYPOINT,
    bytes: tool.module.bytes,
    instrumented: prepared.instrumented,
    compiled: prepared.compiled,
    cap: tool.limits.maxMemoryPages,
  };
}
