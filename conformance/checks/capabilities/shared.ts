// What the capability checks share: the script guest and the raw caller as toolpacks (helix/v1),
// the answers a script run returns, a run's capability audit, policies with grants and a secret
// file, and artifacts stored for a guest to read.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResponseEnvelope } from '../../../abi/index.js';
import type { Host } from '../../../host/5-host/host.js';
import type { CheckContext, CheckEnv, PackSpec } from '../../check.js';
import { RAW_LIMITS, rawCallerModule, SCRIPT_LIMITS } from '../../kit/caps-kit.js';
import { checkDefaultPolicy } from '../../runner.js';

/** Bytes in a MiB. */
export const MiB = 1 << 20;

/** One answer of the broker, as the script guest hands it back. */
export interface Answer {
  status: 'ok' | 'error';
  abi_version?: number;
  // biome-ignore lint/suspicious/noExplicitAny: a capability's result is whatever that capability answers
  capability_result?: { name: string; result: any };
  // biome-ignore lint/suspicious/noExplicitAny: error details differ by code
  error?: { code: string; message: string; details: any };
}

/** A toolpack of the AssemblyScript script guest (conformance/assembly/script.ts). */
export function script(id: string, manifest: Record<string, unknown>): PackSpec {
  return { id, module: '', guest: 'script.ts', manifest: { limits: SCRIPT_LIMITS, ...manifest } };
}

/** A raw caller toolpack (helix/v1 WAT); `bulk` for capability ABI 2. */
export function raw(
  id: string,
  allow: readonly string[],
  opts: { bulk?: boolean; limits?: Record<string, unknown>; manifest?: Record<string, unknown> } = {},
): PackSpec {
  return {
    id,
    module: rawCallerModule({ bulk: opts.bulk === true }),
    manifest: {
      limits: { ...RAW_LIMITS, ...opts.limits },
      capabilities: { abiVersion: opts.bulk === true ? 2 : 1, allow },
      ...opts.manifest,
    },
  };
}

/** The answers of a script.ts run. */
export function answersOf(r: ResponseEnvelope): Answer[] {
  return ((r.output as { answers?: Answer[] } | undefined)?.answers ?? []) as Answer[];
}

/** A capability call the script guest makes. */
export const call = (name: string, args: Record<string, unknown> = {}) => ({ name, args });

/** The run's audit records of capability decisions. */
export function capabilityAudit(
  host: Host,
  runId: string,
): Array<{ decision?: string; capability?: string | null; reason?: string; code?: string }> {
  return host.audit.list({ runId, kind: 'capability' }) as never;
}

/** A policy: the check's default with these grants (and more fields). */
export function policyWith(env: CheckEnv, grants: Record<string, string[]>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...checkDefaultPolicy(env), grants, ...more };
}

/** A secret file for a policy's `secrets` source, written when the policy is. */
export function secretFile(env: CheckEnv, value: string): string {
  const file = path.join(env.dir, 'db_password.secret');
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return file;
}

/** Stores `bytes` as an artifact of `type` in the check's host; its id. */
export async function stored(ctx: CheckContext, bytes: Uint8Array, type = 'binary'): Promise<string> {
  return (await (await ctx.host()).artifacts.importInline(bytes, { type, maxBytes: 1 << 30 })).id;
}

/** sha256 hex of bytes. */
export const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** The grants of every tool in the capability checks' policies. */
export const BASE_GRANTS = ['clock.*', 'log.*', 'kv.*', 'artifact.*'];

/** The clock request the callers send where any allowlisted call will do. */
export const CLOCK_CALL = { abi_version: 1, name: 'clock.now_unix', args: {} };
