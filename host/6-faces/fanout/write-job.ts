// Writing a job bundle from the submitting store (abi/ABI.md, ABI-FANOUT-001, -002): the call is
// checked and identified here as a dry run (so a call this host would refuse is refused before
// anything is written or submitted), then its policy, canonical params and input artifacts (records
// and bytes) are written into a new directory, job.json last, so a bundle with a job.json is whole.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { ERROR_CODES, HelixError, type ErrorCode, type ResponseEnvelope } from '../../../abi/index.js';
import { getArtifact } from '../../4-calls/artifacts/index.js';
import type { CallIdentity } from '../../4-calls/call.js';
import { canonicalJson } from '../../1-base/hashing.js';
import { hostStore, type Host } from '../../5-host/host.js';
import type { Tool } from '../../4-calls/tools/tool.js';
import { writeBlobFile } from './bundle-blobs.js';
import { JOB_FILES, JOB_FORMAT, JobSchema, writeBundleJson, type Job } from './bundle-format.js';

/** The call a job makes: a tool, its input, and the limits asked for. */
export interface JobCall {
  readonly tool_id: string;
  /** A version or range, resolved here to the exact version the bundle names. */
  readonly tool_version?: string;
  readonly input: Record<string, unknown>;
  readonly constraints?: { readonly timeout_ms?: number; readonly memory_mb_limit?: number };
}

/** The HelixError a refused response carries. */
function responseError(response: ResponseEnvelope): HelixError {
  const wire = response.error;
  const code = wire !== undefined && wire.code in ERROR_CODES ? (wire.code as ErrorCode) : 'I-REQ-ENVELOPE';
  return new HelixError(code, {
    message: wire?.message ?? `The call ended ${response.status}.`,
    details: wire?.details ?? {},
    ...(wire?.hint === undefined ? {} : { hint: wire.hint }),
  });
}

/** A dry run of `call` on `host`: its identity, the tool it resolved to, or the host's refusal. */
export async function identifyCall(host: Host, call: JobCall): Promise<{ identity: CallIdentity; tool: Tool }> {
  let identity: CallIdentity | undefined;
  const response = await host.call(
    {
      tool_id: call.tool_id,
      tool_version: call.tool_version ?? '*',
      input: call.input,
      constraints: call.constraints ?? {},
      dry_run: true,
    },
    { onIdentity: (i) => (identity = i) },
  );
  if (response.status !== 'success' || identity === undefined) throw responseError(response);
  const tool = host.tools().find((t) => t.id === response.provenance.tool_id && t.version === response.provenance.tool_version)!;
  return { identity, tool };
}

/** Refuses a tool that cannot run on a node: a host built-in, or one that may read secrets (ABI-FANOUT-002). */
function checkMovable(tool: Tool): void {
  if (tool.kind === 'builtin') {
    throw new HelixError('C-CONTRACT-JOB-TOOL', {
      message: `"${tool.id}" is a host built-in; it works on this store and runs only here.`,
      details: { tool_id: tool.id },
      hint: 'Fan out toolpacks only; call built-ins (artifact imports and listings) on the submitting host.',
    });
  }
  const secrets = tool.capabilities.filter((c) => c.startsWith('secrets.'));
  if (secrets.length > 0)
    throw new HelixError('P-PRECOND-JOB-SECRETS', {
      message: `"${tool.id}" may read secrets (${secrets.join(', ')}), so it is not sent to a node.`,
      details: { tool_id: tool.id, capabilities: secrets },
    });
}

/** Makes `dir` for new bundles (`what` says which); refuses one that exists and is not empty (I-REQ-TARGET-NOT-EMPTY). */
export function newDirectory(dir: string, what = 'job bundle'): void {
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0)
    throw new HelixError('I-REQ-TARGET-NOT-EMPTY', {
      message: `The ${what} directory ${dir} is not empty.`,
      details: { dir },
      hint: `Give a new or empty directory for the ${what}.`,
    });
}

/** Checks `call` as a job (a dry run on `host`, then ABI-FANOUT-002); its identity and tool. */
export async function checkJobCall(host: Host, call: JobCall): Promise<{ identity: CallIdentity; tool: Tool }> {
  const checked = await identifyCall(host, call);
  checkMovable(checked.tool);
  return checked;
}

/**
 * Writes the job bundle of `call` into `dir` (a new or empty directory) from `host`'s store, and
 * returns its job.json; an input blob a bundle of `linkFrom` holds is hard-linked from it. The
 * call is refused here exactly as this host would refuse it.
 */
export async function writeJobBundle(host: Host, call: JobCall, dir: string, linkFrom: readonly string[] = []): Promise<Job> {
  const { identity, tool } = await checkJobCall(host, call);
  const store = hostStore(host);
  const inputs = tool.validateInput(call.input).artifacts.map((ref) => getArtifact(store, ref.artifact_id));
  const target = path.resolve(dir);
  newDirectory(target);
  for (const record of inputs) await writeBlobFile(store, target, record.sha256, linkFrom);
  writeFileSync(path.join(target, JOB_FILES.params), identity.canonical_params);
  writeFileSync(path.join(target, JOB_FILES.policy), canonicalJson(host.policy.policy));
  const job: Job = JobSchema.parse({
    format: JOB_FORMAT,
    run_id: identity.run_id,
    params_hash: identity.params_hash,
    policy_hash: identity.policy_hash,
    request: { tool_id: tool.id, tool_version: tool.version, input: call.input, constraints: { ...call.constraints } },
    plugins_dir: path.resolve(host.pluginsDir),
    submitted_from: { home: host.home, hostname: hostname() },
    inputs,
  });
  writeBundleJson(path.join(target, JOB_FILES.job), job);
  return job;
}
