// Deterministic run identity (abi/ABI.md, ABI-RUNID-001..008): canonical params by RFC 8785 over
// everything that decides a run's result (exact tool version, module digest, tool contract digest,
// input with artifact ids replaced by their content hashes, limits), and
// run_id = H(tool id, contract version, policy hash, params hash).
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../1-base/hashing.js';

/** An artifact the input refers to, at a JSON pointer path, with its content hash. */
export interface InputArtifact {
  /** JSON pointer of the reference in the input, e.g. `/reads`. */
  readonly path: string;
  readonly artifact_id: string;
  readonly sha256: string;
}

/** What identifies a run's work. */
export interface ParamsSource {
  readonly tool_id: string;
  readonly tool_version: string;
  readonly contract_version: string;
  /** The module digest, or null for a host built-in. */
  readonly module_digest: string | null;
  /**
   * The toolpack's contract digest (host/4-calls/tools/contract-digest.ts): allowlist, declared outputs,
   * manifest limits, schemas, determinism, abi. Absent for a host built-in, whose contract is the
   * host's code, so built-in identities are what they were before the digest existed.
   */
  readonly contract_digest?: string;
  /** The function called (part of the work, and what a verify calls again). */
  readonly entrypoint?: string;
  readonly input: Record<string, unknown>;
  readonly input_artifacts: readonly InputArtifact[];
  /** Extra identity a tool defines, e.g. a snapshot boundary (artifact_list). */
  readonly boundary?: Record<string, unknown>;
  /**
   * Limits a guest can observe or that decide whether it succeeds (fuel, memory cap, output
   * ceiling): the same input under a smaller memory cap is different work. The deadline is
   * left out: wall-clock time is not reproducible, and a run that met it succeeded.
   */
  readonly limits?: { readonly fuel: number; readonly max_memory_pages: number; readonly max_output_bytes: number };
}

/** A run's identity. */
export interface RunIdentity {
  readonly run_id: string;
  readonly params_hash: string;
  /** The canonical params, RFC 8785 text, stored once per hash. */
  readonly canonical_params: string;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Replaces each referenced artifact id in a copy of the input by `sha256:<content hash>`. */
function contentAddressedInput(input: Record<string, unknown>, artifacts: readonly InputArtifact[]): unknown {
  const copy = structuredClone(input) as Record<string, unknown>;
  for (const a of artifacts) {
    const keys = a.path
      .split('/')
      .slice(1)
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop();
    if (last === undefined) continue;
    let node: unknown = copy;
    for (const k of keys) node = (node as Record<string, unknown>)[k];
    if (typeof node === 'object' && node !== null && (node as Record<string, unknown>)[last] === a.artifact_id) {
      (node as Record<string, unknown>)[last] = `sha256:${a.sha256}`;
    }
  }
  return copy;
}

/**
 * The canonical params of a call. Artifact ids are replaced by content hashes, so the same
 * bytes imported twice identify the same work (replay keys come from immutable inputs).
 */
export function canonicalParams(src: ParamsSource): string {
  return canonicalJson({
    tool: {
      id: src.tool_id,
      version: src.tool_version,
      contract_version: src.contract_version,
      module_digest: src.module_digest,
      entrypoint: src.entrypoint ?? null,
      ...(src.contract_digest === undefined ? {} : { contract_digest: src.contract_digest }),
    },
    input: contentAddressedInput(src.input, src.input_artifacts),
    input_artifacts: [...src.input_artifacts].map((a) => ({ path: a.path, sha256: a.sha256 })).sort((x, y) => x.path.localeCompare(y.path)),
    boundary: src.boundary ?? null,
    limits: src.limits ?? null,
  });
}

/** The run id of a tool's work under a policy: `run_` and 32 hex digits of H(tool id, contract version, policy hash, params hash). */
export function runIdOf(toolId: string, contractVersion: string, policyHash: string, paramsHash: string): string {
  return `run_${sha256(canonicalJson([toolId, contractVersion, policyHash, paramsHash])).slice(0, 32)}`;
}

/** run_id and params hash from the canonical params. */
export function runIdentity(src: ParamsSource, policyHash: string): RunIdentity {
  const canonical_params = canonicalParams(src);
  const params_hash = `sha256:${sha256(canonical_params)}`;
  return { run_id: runIdOf(src.tool_id, src.contract_version, policyHash, params_hash), params_hash, canonical_params };
}
