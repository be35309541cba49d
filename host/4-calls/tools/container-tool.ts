// A container toolpack as a Tool (ABI-CONTAINER-*): the same descriptor and execute as a
// WebAssembly toolpack, so runs, replay, provenance, MCP and the CLI treat it alike. Its execute
// binds argv from the input, then makes one docker.run call through a broker of its run, exactly
// as a guest would (allowlist, policy grant, journal, audit, declared outputs): the inputs are
// materialised in the workspace, the declared outputs and logs registered as the run's artifacts,
// and stdout read as the output. The tool is offered only when the policy grants it everything it
// needs (containerOffer).
import { createHash } from 'node:crypto';
import {
  DEFAULT_ENTRYPOINT,
  DOCKER_IMAGE_REF,
  HelixError,
  isHelixError,
  NO_DOCKER,
  type Policy,
  type WireError,
} from '../../../abi/index.js';
import type { DockerRunResult } from '../../../capabilities/docker-run.js';
import { createBroker, type RunEffects } from '../broker/broker.js';
import { RunOutputs } from '../broker/outputs.js';
import { canonicalJson, sha256Digest } from '../../1-base/hashing.js';
import { isLogRole, outputFile, type LoadedContainer } from '../loader/load-container.js';
import { ungrantedCapabilities } from '../policy/rules.js';
import { type BoundArgv, bindArgv } from './container-argv.js';
import { readStdout } from './container-stdout.js';
import type { Tool, ToolOutcome } from './tool.js';

/** A Tool over a loaded container toolpack, running `image`. */
export interface ContainerTool extends Tool {
  readonly kind: 'container';
  readonly loaded: LoadedContainer;
  /** The image id or digest the manifest's image resolves to under the policy. */
  readonly image: string;
}

// The tail of stderr a failed command's error carries.
const STDERR_TAIL_CHARS = 2000;

/**
 * Whether `policy` offers the container tool, and with which image (ABI-CONTAINER-002): the image
 * is an id or digest, or a name the policy pins; docker.run is granted to the tool by exact name;
 * docker.tools has its entry, which lets it run that image.
 */
export function containerOffer(loaded: LoadedContainer, policy: Policy): { image: string } | { why: string } {
  const m = loaded.manifest;
  const docker = policy.docker ?? NO_DOCKER;
  const image = DOCKER_IMAGE_REF.test(m.image) ? m.image : docker.pins?.[m.image];
  if (image === undefined) return { why: `the policy's docker.pins does not pin ${m.image}` };
  if (ungrantedCapabilities(policy, m.id, ['docker.run']).length > 0)
    return { why: `the policy's grants do not grant docker.run to ${m.id}` };
  const grant = Object.hasOwn(docker.tools, m.id) ? docker.tools[m.id]! : undefined;
  if (grant === undefined) return { why: `the policy's docker.tools has no entry for ${m.id}` };
  if (!docker.images.includes(image) || (grant.images !== undefined && !grant.images.includes(image)))
    return { why: `the policy does not let ${m.id} run ${image}` };
  return { image };
}

/** Wraps a loaded container toolpack, offered with `image`. */
export function containerTool(loaded: LoadedContainer, image: string): ContainerTool {
  const m = loaded.manifest;
  const files = m.declaredOutputs.filter((o) => !isLogRole(m, o.role));
  const limits = Object.fromEntries(
    (
      [
        ['memory_bytes', m.limits.memoryBytes],
        ['cpus', m.limits.cpus],
        ['pids', m.limits.pids],
        ['tmpfs_bytes', m.limits.tmpfsBytes],
      ] as const
    ).filter(([, v]) => v !== undefined),
  );
  return {
    kind: 'container',
    loaded,
    image,
    id: m.id,
    version: m.version,
    contractVersion: m.contractVersion,
    description: m.description,
    deterministic: m.deterministic,
    entrypoint: DEFAULT_ENTRYPOINT,
    capabilities: ['docker.run'],
    moduleDigest: null,
    // The image it resolved to is part of what the tool is: a new pin makes new runs (ABI-CONTAINER-005).
    contractDigest: sha256Digest(
      canonicalJson({ kind: 'container', manifest: m, image, input_schema: loaded.inputSchema, output_schema: loaded.outputSchema }),
    ),
    limits: loaded.limits,
    minMemoryPages: 0,
    inputSchema: loaded.inputSchema,
    outputSchema: loaded.outputSchema,
    validateInput: loaded.validateInputRefs,
    validateOutput: loaded.validateOutput,
    async execute(ctx): Promise<ToolOutcome> {
      let bound: BoundArgv;
      try {
        bound = bindArgv(m, ctx.input);
      } catch (err) {
        if (!isHelixError(err)) throw err;
        return fault(err.toWire());
      }
      const outputs = new RunOutputs(
        ctx.store,
        ctx.runId,
        m.declaredOutputs.map(({ role, type, label }) => ({ role, type, ...(label === undefined ? {} : { label }) })),
        ctx.policy.policy.ceilings.maxImportBytes,
      );
      const broker = createBroker({
        store: ctx.store,
        policy: ctx.policy.policy,
        toolId: m.id,
        allow: ['docker.run'],
        network: [],
        runId: ctx.runId,
        deadlineMs: ctx.deadlineMs,
        signal: ctx.signal,
        maxCapabilityCalls: 1,
        outputs,
        ...(ctx.onLog === undefined ? {} : { onLog: ctx.onLog }),
        ...(ctx.onCapabilityCall === undefined ? {} : { onCall: ctx.onCapabilityCall }),
      });
      const args = {
        image,
        argv: bound.argv,
        inputs: bound.inputs,
        outputs: files.map((o) => ({ file: outputFile(o), role: o.role, type: o.type })),
        logs: m.logs,
        limits,
      };
      const call = await broker.terminal('docker.run', args);
      const effects = broker.finish();
      if (!call.ok) return fault(call.error, effects);
      const result = call.result as DockerRunResult;
      try {
        const output = outputOf(result, m.stdout.format, files.length > 0);
        const text = JSON.stringify(output);
        if (Buffer.byteLength(text) > ctx.limits.maxOutputBytes) {
          throw new HelixError('S-TOOL-OUTPUT-TOO-LARGE', {
            message: `The output of ${m.id} is ${Buffer.byteLength(text)} bytes, over its ${ctx.limits.maxOutputBytes}.`,
            details: { bytes: Buffer.byteLength(text), max_output_bytes: ctx.limits.maxOutputBytes },
          });
        }
        return {
          kind: 'output',
          output: { status: 'ok', output },
          outputSha256: createHash('sha256').update(text).digest('hex'),
          fuelUsed: 0,
          memoryPages: 0,
          effects,
        };
      } catch (err) {
        if (!isHelixError(err)) throw err;
        return fault(err.toWire(), effects);
      }
    },
  };
}

/** The tool's output from docker.run's result: a command killed or failed is an error; stdout read as the format; the file outputs' artifact ids under `outputs`. */
function outputOf(r: DockerRunResult, format: 'none' | 'tsv' | 'json', hasFiles: boolean): Record<string, unknown> {
  if (r.timed_out)
    throw new HelixError('R-TIMEOUT-001', {
      message: "The container tool's command was killed at the policy's docker.ceilings.timeoutMs.",
      details: { phase: 'container' },
    });
  if (r.oom_killed || r.exit_code !== 0) {
    const stderr = r.stderr_encoding === 'utf8' ? r.stderr.slice(-STDERR_TAIL_CHARS) : '(not UTF-8)';
    const how = r.oom_killed ? 'was killed for passing its memory limit' : `exited ${r.exit_code}`;
    throw new HelixError('S-TOOL-CONTAINER-EXIT', {
      message: `The container tool's command ${how}.`,
      details: { exit_code: r.exit_code, oom_killed: r.oom_killed, stderr },
    });
  }
  if (r.stdout_encoding !== 'utf8' && format !== 'none')
    throw new HelixError('S-TOOL-CONTAINER-STDOUT', {
      message: "The container tool's stdout cannot be read: it is not UTF-8.",
      details: { reason: 'not UTF-8' },
    });
  const output = readStdout(format, r.stdout, r.stdout_truncated);
  return hasFiles ? { ...output, outputs: Object.fromEntries(r.outputs.map((o) => [o.role, o.artifact_id])) } : output;
}

function fault(error: WireError, effects?: RunEffects): ToolOutcome {
  return { kind: 'fault', error, fuelUsed: 0, memoryPages: 0, ...(effects === undefined ? {} : { effects }) };
}
