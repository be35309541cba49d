// The public API of the Helix host: create a host, call tools, load and check toolpacks.
export { createHost, type Host, type HostOptions } from './host.js';
export type { CallOptions } from './call.js';
export { bundledPluginsDir, packageRoot } from './paths.js';
export { HelixError, isHelixError, type HelixErrorOptions } from '../abi/index.js';
export { loadToolpacks, loadToolpacksOrThrow, findManifests, type LoadedTool, type LoadResult } from './loader/load-toolpacks.js';
export { formatViolation, type Violation } from './loader/violation.js';
export { loadPolicy, type LoadedPolicy } from './policy/load-policy.js';
export { createEngine, resolveEngineConfig, type Engine, type EngineOptions, type EngineConfig, type EngineStats } from './engine/engine.js';
export type { EffectiveLimits } from '../abi/index.js';
export type { Tool, ToolDescriptor, ToolOutcome } from './tools/tool.js';
export type { WasmTool } from './tools/wasm-tool.js';
export { openStore, resolveHome, type Store } from './store/open-store.js';
