// What the floors above the Host use of toolpacks and policies without holding a Host: loading a
// policy, loading and checking toolpacks fail-closed, the callable tools they make under a
// policy (`helix tools`), and the shapes of tools. The faces reach the call pipeline only here
// and through the Host itself.
import type { Policy } from '../../abi/index.js';
import type { LoadedContainer } from '../4-calls/loader/load-container.js';
import type { LoadedTool } from '../4-calls/loader/load-toolpacks.js';
import { isToolAllowed, ungrantedCapabilities } from '../4-calls/policy/rules.js';
import { builtinTools } from '../4-calls/tools/builtins.js';
import { containerOffer } from '../4-calls/tools/container-tool.js';
import type { Tool } from '../4-calls/tools/tool.js';

export type { CallOptions } from '../4-calls/call.js';
export { isContainerDocument, type LoadedContainer } from '../4-calls/loader/load-container.js';
export {
  findManifests,
  type LoadedTool,
  type LoadOptions,
  type LoadResult,
  loadEveryToolpackOrThrow,
  loadToolpacks,
  loadToolpacksOrThrow,
} from '../4-calls/loader/load-toolpacks.js';
export type { JsonSchema } from '../4-calls/loader/schema-bundle.js';
export { defaultPolicyDocument } from '../4-calls/policy/default-policy.js';
export { type LoadedPolicy, type LoadPolicyOptions, loadPolicy } from '../4-calls/policy/load-policy.js';
export { BUILTIN_PREFIX } from '../4-calls/tools/builtins.js';
export type { Tool, ToolDescriptor, ToolOutcome } from '../4-calls/tools/tool.js';
export type { WasmTool } from '../4-calls/tools/wasm-tool.js';

/** The toolpacks under a directory, WebAssembly and container ones, as the Host loads them. */
export interface LoadedToolpacks {
  readonly tools: readonly LoadedTool[];
  readonly containers: readonly LoadedContainer[];
}

/** One callable tool as `helix tools` lists it. */
export interface ToolListing {
  readonly id: string;
  readonly version: string;
  readonly kind: 'wasm' | 'builtin' | 'container';
  readonly description: string;
  readonly deterministic: string;
  /** The module's digest, the image a container toolpack is offered as, or null for a built-in. */
  readonly digest: string | null;
  readonly limits: unknown;
  readonly capabilities: readonly string[];
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
}

/**
 * The tools a Host over `loaded` would serve under `policy`: the toolpacks, the container
 * toolpacks the policy offers (ABI-CONTAINER-002; listed with the image they resolve to), and the
 * built-ins. Nothing is started and no store is opened.
 */
export function listTools(loaded: LoadedToolpacks, policy: Policy): ToolListing[] {
  const offered = loaded.containers.flatMap((c): ToolListing[] => {
    const offer = containerOffer(c, policy);
    if (!('image' in offer)) return [];
    const m = c.manifest;
    return [
      {
        id: m.id,
        version: m.version,
        kind: 'container',
        description: m.description,
        deterministic: m.deterministic,
        digest: offer.image,
        limits: c.limits,
        capabilities: ['docker.run'],
        inputSchema: c.inputSchema,
        outputSchema: c.outputSchema,
      },
    ];
  });
  return [
    ...loaded.tools.map(
      (t): ToolListing => ({
        id: t.manifest.id,
        version: t.manifest.version,
        kind: 'wasm',
        description: t.manifest.description,
        deterministic: t.manifest.deterministic,
        digest: t.manifest.digest,
        limits: t.limits,
        capabilities: t.manifest.capabilities.allow,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      }),
    ),
    ...offered,
    ...builtinTools(policy).map(
      (t: Tool): ToolListing => ({
        id: t.id,
        version: t.version,
        kind: 'builtin',
        description: t.description,
        deterministic: t.deterministic,
        digest: null,
        limits: t.limits,
        capabilities: t.capabilities,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      }),
    ),
  ];
}

/** Why `policy` would refuse every call of the tool (not allowed, or a capability it asks for not granted), or undefined. */
export function policyRefusal(policy: Policy, toolId: string, capabilities: readonly string[]): string | undefined {
  if (!isToolAllowed(policy, toolId)) return 'refused by the policy';
  const missing = ungrantedCapabilities(policy, toolId, capabilities);
  return missing.length === 0 ? undefined : `policy does not grant ${missing.join(', ')}`;
}
