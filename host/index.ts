// The public API of the Helix host (package entry "."; README "Embedding Helix"): create a host,
// call tools, read its artifacts and runs, fan calls out as job bundles, load and check
// toolpacks. Nothing here hands out the store or the engine; the MCP server is the entry "./mcp",
// the whole ABI the entry "./abi".
export { createHost, type Host, type HostOptions } from './5-host/host.js';
export type {
  AuditEntry,
  HostArtifacts,
  HostAudit,
  HostModules,
  HostRuns,
  ModuleRecord,
  RunShow,
  ExportOptions,
  ListOptions,
  RefusedCall,
  RunCrate,
  RunCrateOptions,
  VerifyReport,
} from './5-host/host-records.js';
export type { CheckedCall, Collected, CollectOptions, HostJobs, Job, JobCall, JobCollector, Result } from './5-host/host-jobs.js';
export { bundledPluginsDir, bundledToolpacksDir } from './1-base/paths.js';
export { HelixError, isHelixError, type HelixErrorOptions } from '../abi/index.js';
export type { ArtifactRecord, RequestEnvelopeInput, ResponseEnvelope, RunEvent, RunRecord, RunStatus, WireError } from '../abi/index.js';
export {
  findManifests,
  type CallOptions,
  type LoadedPolicy,
  type LoadedTool,
  type LoadResult,
  loadPolicy,
  loadToolpacks,
  loadToolpacksOrThrow,
  type Tool,
  type ToolDescriptor,
  type ToolOutcome,
  type WasmTool,
} from './5-host/toolpacks.js';
export { formatViolation, type Violation } from './1-base/files/violation.js';
export type { EngineOptions, EngineStats } from './5-host/host.js';
export type { StoreDiagnostics } from './5-host/store-upkeep.js';
export type { EffectiveLimits } from '../abi/index.js';
