// The Host of the commands that call tools (call, serve, job bundle and submit), opened so that
// a command refused for its arguments makes no store: where the home holds no store yet, the
// toolpacks are loaded and the arguments checked against them first, and only then is the
// store made. Where a store exists, the Host opens as always (its load cache first, ABI-LOAD-008).
import semver from 'semver';
import { HelixError } from '../abi/index.js';
import type { Host } from '../host/5-host/host.js';

/** Where the Host's toolpacks, policy and store are. */
export interface OpenHostOptions {
  readonly toolpacks?: string;
  readonly policy?: string;
  readonly home?: string;
  /** How often a long call reports progress (helix serve). */
  readonly progressIntervalMs?: number;
}

/** The tools the Host would offer, as the check sees them. */
export type OfferedTools = ReturnType<Host['tools']>;

/**
 * Opens the Host; `check` sees the tools it offers before a new store is made, and a HelixError
 * it throws stops the command with no store made.
 */
export async function openHost(opts: OpenHostOptions, check?: (tools: OfferedTools) => void): Promise<Host> {
  const { createHost, createHostParts } = await import('../host/5-host/host.js');
  const { storeAt } = await import('../host/5-host/host-records.js');
  const home = {
    ...(opts.home === undefined ? {} : { home: opts.home }),
    ...(opts.progressIntervalMs === undefined ? {} : { progressIntervalMs: opts.progressIntervalMs }),
  };
  if (storeAt(opts.home).exists) return createHost({ toolpacksDir: opts.toolpacks, policyFile: opts.policy, ...home });
  const { bundledToolpacksDir } = await import('../host/1-base/paths.js');
  const { loadPolicy } = await import('../host/5-host/toolpacks.js');
  const policy = loadPolicy(opts.policy);
  const toolpacksDir = opts.toolpacks ?? bundledToolpacksDir();
  const parts = await createHostParts(policy, toolpacksDir);
  let host: Host;
  try {
    check?.(parts.tools);
    host = await createHost({ policy, toolpacksDir, shared: parts, ...home });
  } catch (err) {
    await parts.engine.close();
    throw err;
  }
  return {
    ...host,
    async close() {
      await host.close();
      await parts.engine.close();
    },
  };
}

/**
 * The check of a call's tool, as the Host's registry resolves it: C-CONTRACT-TOOL-UNKNOWN when
 * no tool has the id, C-CONTRACT-VERSION-NO-MATCH when no version satisfies the range.
 */
export function toolOffered(toolId: string, range: string): (tools: OfferedTools) => void {
  return (tools) => {
    const versions = tools.filter((t) => t.id === toolId).map((t) => t.version);
    if (versions.length === 0)
      throw new HelixError('C-CONTRACT-TOOL-UNKNOWN', {
        message: `No tool "${toolId}" is loaded.`,
        details: { tool_id: toolId, available: [...new Set(tools.map((t) => t.id))].sort() },
      });
    if (semver.validRange(range) !== null && !versions.some((v) => semver.satisfies(v, range, { includePrerelease: true })))
      throw new HelixError('C-CONTRACT-VERSION-NO-MATCH', {
        message: `No version of "${toolId}" satisfies "${range}".`,
        details: { tool_id: toolId, requested: range, available: versions },
      });
  };
}

/** I-REQ-ENVELOPE, as the registry says it, when `range` is not a semver version or range. */
export function checkVersionRange(range: string): void {
  if (semver.validRange(range) === null)
    throw new HelixError('I-REQ-ENVELOPE', {
      message: `tool_version "${range}" is not a semver version or range.`,
      details: { violations: [{ path: '/tool_version', message: 'must be a semver version or range such as 1.x or ^1.2.0' }] },
    });
}
