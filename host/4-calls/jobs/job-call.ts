// The call a job makes (abi/ABI.md, "Fan-out"): identified by a dry run on a host, so a call the
// host would refuse is refused with the host's own code before a bundle is written (ABI-FANOUT-002),
// refused when its tool cannot leave this host, and, on the node, made only when it has the run id
// the job was made for (ABI-FANOUT-004).
import { randomUUID } from 'node:crypto';
import { ERROR_CODES, HelixError, type ErrorCode, type ResponseEnvelope } from '../../../abi/index.js';
import type { CallIdentity, CallOptions } from '../call.js';
import type { Tool } from '../tools/tool.js';
import type { Job } from './bundle-format.js';

/** The call a job makes: a tool, its input, and the limits asked for. */
export interface JobCall {
  readonly tool_id: string;
  /** A version or range, resolved here to the exact version the bundle names. */
  readonly tool_version?: string;
  readonly input: Record<string, unknown>;
  readonly constraints?: { readonly timeout_ms?: number; readonly memory_mb_limit?: number };
}

/** What jobs need of a host to identify and make calls: its call and its tools (the Host is one). */
export interface JobCaller {
  call(request: unknown, options?: CallOptions): Promise<ResponseEnvelope>;
  tools(): readonly Tool[];
}

/** A call checked as a job: its identity and the tool it resolved to. */
export interface CheckedCall {
  readonly identity: CallIdentity;
  readonly tool: Tool;
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
export async function identifyCall(host: JobCaller, call: JobCall): Promise<CheckedCall> {
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
  const { tool_id, tool_version } = response.provenance;
  const tool = host.tools().find((t) => t.id === tool_id && t.version === tool_version);
  // The dry run resolved the tool among these very tools, so this is a host bug, never a user's error.
  if (tool === undefined) throw new Error(`the dry run resolved ${tool_id}@${tool_version}, which the host does not list`);
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

/** Checks `call` as a job (a dry run on `host`, then ABI-FANOUT-002); its identity and tool. */
export async function checkJobCall(host: JobCaller, call: JobCall): Promise<CheckedCall> {
  const checked = await identifyCall(host, call);
  checkMovable(checked.tool);
  return checked;
}

/**
 * Makes the job's call on `host` (a node's): first a dry run, which must give the run id the job
 * was made for (C-CONTRACT-JOB-TOOL otherwise: other toolpacks, another Helix), then the call.
 */
export async function callJob(host: JobCaller, job: Job): Promise<ResponseEnvelope> {
  const { identity } = await identifyCall(host, job.request);
  if (identity.run_id !== job.run_id) {
    throw new HelixError('C-CONTRACT-JOB-TOOL', {
      message: `On this node the call is run ${identity.run_id}, not ${job.run_id} as the job was made for.`,
      details: {
        expected_run_id: job.run_id,
        actual_run_id: identity.run_id,
        expected_params_hash: job.params_hash,
        actual_params_hash: identity.params_hash,
        policy_hash: identity.policy_hash,
      },
    });
  }
  return host.call({
    call_id: `job-${randomUUID()}`,
    tool_id: job.request.tool_id,
    tool_version: job.request.tool_version,
    input: job.request.input,
    constraints: job.request.constraints,
  });
}
