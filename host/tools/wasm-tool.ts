// A WebAssembly toolpack as a Tool: its manifest is the descriptor and the engine runs it.
import { DEFAULT_ENTRYPOINT, ERROR_CODES } from '../../abi/index.js';
import type { Engine } from '../engine/engine.js';
import type { LoadedTool } from '../loader/load-toolpacks.js';
import type { Tool } from './tool.js';

/** A Tool over a loaded toolpack, executed by `engine`. */
export interface WasmTool extends Tool {
  readonly kind: 'wasm';
  readonly loaded: LoadedTool;
}

/** Wraps a loaded toolpack. */
export function wasmTool(loaded: LoadedTool, engine: Engine): WasmTool {
  const m = loaded.manifest;
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
    limits: loaded.limits,
    minMemoryPages: Math.max(0, ...loaded.module.info.memories.map((mem) => mem.initial)),
    inputSchema: loaded.inputSchema,
    outputSchema: loaded.outputSchema,
    validateInput: loaded.validateInputRefs,
    validateOutput: loaded.validateOutput,
    async execute(ctx) {
      const result = await engine.execute({ tool: loaded, input: ctx.inputBytes, limits: ctx.limits });
      if (result.kind === 'output') return { kind: 'output', output: result.output, fuelUsed: result.fuelUsed, memoryPages: result.memoryPages };
      return { kind: 'fault', error: { code: result.code, message: result.message, details: result.details, hint: ERROR_CODES[result.code].hint }, fuelUsed: result.fuelUsed, memoryPages: result.memoryPages };
    },
  };
}
