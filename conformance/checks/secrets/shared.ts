// What the secret checks share: the secret-paths guest with an allowlist, the policy that grants it
// the secret, a run's every record as one text, the searches for every form of the secret (a text,
// the whole Helix home), and the built CLI as a child process.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ResponseEnvelope } from '../../../abi/index.js';
import { packageRoot } from '../../../host/1-base/paths.js';
import type { Host } from '../../../host/5-host/host.js';
import { expect, type CheckContext, type CheckEnv, type PackSpec } from '../../check.js';
import { FORMS, formsIn, formsInTree, MARKER, SECRET, SECRET_NAME } from '../../kit/caps-kit.js';
import { checkDefaultPolicy } from '../../runner.js';

const run = promisify(execFile);
/** The secret-paths guest's limits. */
export const LIMITS = { maxInputBytes: 1_000_000, maxOutputBytes: 4_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 1000 };
/** The grants of every tool in the secret checks' policies. */
export const BASE_GRANTS = ['clock.*', 'log.*', 'kv.*', 'artifact.*'];

/** One answer of the broker, as the guest hands it back. */
export interface Answer {
  status: 'ok' | 'error';
  // biome-ignore lint/suspicious/noExplicitAny: a capability's result is whatever that capability answers
  capability_result?: { name: string; result: any };
  // biome-ignore lint/suspicious/noExplicitAny: error details differ by code
  error?: { code: string; message: string; details: any };
}

/** A capability call the guest makes. */
export const call = (name: string, args: Record<string, unknown> = {}) => ({ name, args });

/** The secret-paths guest with these capabilities (and more manifest fields). */
export function guest(id: string, allow: readonly string[], more: Record<string, unknown> = {}): PackSpec {
  return {
    id,
    module: '',
    guest: 'secret-paths.ts',
    manifest: {
      limits: LIMITS,
      capabilities: {
        abiVersion: 1,
        allow: [...allow, `secrets.get.${SECRET_NAME}`],
        ...(more.network === undefined ? {} : { network: more.network }),
      },
      ...(more.declaredOutputs === undefined ? {} : { declaredOutputs: more.declaredOutputs }),
    },
  };
}

/** The guest trying every path of its own (kv, logs, clock). */
export const paths = (): PackSpec => guest('s.paths', ['kv.put', 'kv.get', 'kv.list', 'log.emit', 'clock.now_unix']);
/** The guest writing a declared report. */
export const writer = (): PackSpec =>
  guest('s.writer', ['artifact.write', 'log.emit'], { declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }] });

/** The policy of a secret check: the secret in a file of the check's directory (mode 0600), granted to s.*; `secretWrites` when given. */
export function secretPolicy(
  env: CheckEnv,
  secretWrites?: Record<string, string>,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  const file = path.join(env.dir, `${SECRET_NAME}.secret`);
  writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
  return {
    ...checkDefaultPolicy(env),
    grants: { '*': BASE_GRANTS, 's.*': [`secrets.get.${SECRET_NAME}`, 'http.request'] },
    secrets: { [SECRET_NAME]: { file } },
    ...(secretWrites === undefined ? {} : { secretWrites }),
    ...more,
  };
}

/** The answers of a guest run. */
export function answersOf(r: ResponseEnvelope): Answer[] {
  return ((r.output as { answers?: Answer[] } | undefined)?.answers ?? []) as Answer[];
}

/** Every record of a run as one text: journal, audit, run record, log artifact. */
export async function runRecords(host: Host, runId: string): Promise<string> {
  const rec = host.runs.get(runId)!;
  const log = rec.log_artifact_id === null ? '' : (await host.artifacts.readBytes(rec.log_artifact_id, 1e8)).toString();
  return JSON.stringify([host.runs.journal(runId), host.audit.list({ runId }), rec]) + log;
}

/** Fails unless no form of the secret is in `text`. */
export function expectClean(where: string, text: string | Uint8Array): void {
  const found = formsIn(text);
  expect(found.length === 0, `${where} holds the secret as ${found.join(', ')}`);
}

/** Flushes the store and searches every file of the check's Helix home for every form; records what was searched. */
export async function scanHome(ctx: CheckContext): Promise<void> {
  const host = await ctx.host();
  await host.diagnostics.flushed();
  const scan = formsInTree(host.home);
  ctx.observe('home_scan', { files: scan.files, bytes: scan.bytes, forms_searched: FORMS.length, found: scan.found });
  expect(scan.found.length === 0, `the Helix home holds the secret: ${scan.found.join('; ')}`);
}

/** The guest got the value: the host shows the marker where the guest put it. */
export function expectMarker(where: string, text: string): void {
  expect(text.includes(MARKER), `${where} has no ${MARKER}: the guest may never have received the secret`);
}

/** The built CLI as a child process, bounded; never throws on a non-zero exit. */
export async function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(packageRoot(), 'dist', 'cli', 'main.js'), ...args], {
      cwd: packageRoot(),
      timeout: 60_000,
      maxBuffer: 1 << 26,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}
