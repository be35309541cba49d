// Policy decisions: which tools run, which capabilities are granted, and the effective limits
// of a call (the smallest of manifest, request and policy wins; budgets grow with the input
// under ceilings that grow too, ABI-BUDGET-*).
import {
  PRIVILEGED_CAPABILITY_FAMILIES,
  WASM_PAGE_BYTES,
  type EffectiveLimits,
  type Policy,
  type SecretWriteAction,
  type ToolLimits,
  type ToolManifest,
} from '../../../abi/index.js';

/** Whether a tool pattern (`*`, `seq.*`, exact id) matches a tool id. */
export function toolPatternMatches(pattern: string, toolId: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return toolId.startsWith(pattern.slice(0, -1));
  return pattern === toolId;
}

/** Whether the policy allows a tool to run at all. */
export function isToolAllowed(policy: Policy, toolId: string): boolean {
  return policy.tools.allow.some((p) => toolPatternMatches(p, toolId));
}

function isPrivileged(capability: string): boolean {
  const family = capability.split('.')[0] ?? '';
  return (PRIVILEGED_CAPABILITY_FAMILIES as readonly string[]).includes(family);
}

/** Whether a capability pattern (`kv.get`, `kv.*`) covers a capability name. Wildcards never cover privileged ones. */
export function capabilityPatternMatches(pattern: string, capability: string): boolean {
  if (pattern === capability) return true;
  if (!pattern.endsWith('.*') || isPrivileged(capability)) return false;
  return capability.startsWith(pattern.slice(0, -1));
}

/** Whether the policy grants `capability` to `toolId`. */
export function isCapabilityGranted(policy: Policy, toolId: string, capability: string): boolean {
  return Object.entries(policy.grants).some(
    ([toolPattern, caps]) => toolPatternMatches(toolPattern, toolId) && caps.some((c) => capabilityPatternMatches(c, capability)),
  );
}

/** The capabilities a tool asks for that the policy does not grant it. */
export function ungrantedCapabilities(policy: Policy, toolId: string, requested: readonly string[]): string[] {
  return requested.filter((c) => !isCapabilityGranted(policy, toolId, c));
}

/** What a request may ask for (the request envelope's constraints). */
export interface RequestedLimits {
  readonly timeoutMs?: number | undefined;
  readonly deadlineUnixMs?: number | undefined;
  readonly memoryMbLimit?: number | undefined;
}

/** The manifest's limits capped by the policy's ceilings (load-time view, no input, no request). */
export function toolLimits(policy: Policy, manifest: ToolManifest): ToolLimits {
  const c = policy.ceilings;
  const l = manifest.limits;
  return {
    perInputMiB: l.perInputMiB ?? null,
    fuel: Math.min(l.fuel ?? c.fuel, c.fuel),
    maxMemoryPages: Math.min(l.maxMemoryPages ?? c.maxMemoryPages, c.maxMemoryPages),
    timeoutMs: Math.min(manifest.timeoutMs, c.timeoutMs),
    maxInputBytes: Math.min(l.maxInputBytes, c.maxInputBytes),
    maxOutputBytes: Math.min(l.maxOutputBytes, c.maxOutputBytes),
    maxCapabilityCalls: Math.min(l.maxCapabilityCalls ?? c.maxCapabilityCalls, c.maxCapabilityCalls),
  };
}

/** The limits of one call: the tool's limits narrowed by what the request asks (never widened). */
export function callLimits(tool: EffectiveLimits, req: RequestedLimits, nowUnixMs: number): EffectiveLimits {
  let timeoutMs = tool.timeoutMs;
  if (req.timeoutMs !== undefined) timeoutMs = Math.min(timeoutMs, req.timeoutMs);
  if (req.deadlineUnixMs !== undefined) timeoutMs = Math.min(timeoutMs, req.deadlineUnixMs - nowUnixMs);
  let maxMemoryPages = tool.maxMemoryPages;
  if (req.memoryMbLimit !== undefined) {
    maxMemoryPages = Math.min(maxMemoryPages, Math.max(1, Math.floor((req.memoryMbLimit * 1024 * 1024) / WASM_PAGE_BYTES)));
  }
  return { ...tool, timeoutMs, maxMemoryPages };
}

/** What happens to a guest's write that carries a secret's value, per path (ABI-SECRET-003..006). */
export interface SecretWriteRules {
  readonly kv: SecretWriteAction;
  readonly artifacts: SecretWriteAction;
  readonly log: SecretWriteAction;
  readonly output: SecretWriteAction;
}

/** The policy's secretWrites with the safe defaults: refuse what persists (kv, artifacts), redact the rest. */
export function secretWriteRules(policy: Policy): SecretWriteRules {
  const s = policy.secretWrites ?? {};
  return { kv: s.kv ?? 'refuse', artifacts: s.artifacts ?? 'refuse', log: s.log ?? 'redact', output: s.output ?? 'redact' };
}
