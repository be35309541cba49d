// What the artifact checks share: a secret file's text kept outside the import roots, how many
// records of each kind the store holds (a refusal must store nothing), the refusal a promise ends
// with, and an import expected to be refused.
import { isHelixError } from '../../../abi/index.js';
import type { Host } from '../../../host/5-host/host.js';
import { CheckFailure, expect, type CheckContext } from '../../check.js';
import { expectNoLeak, MARKER } from '../../kit/files-kit.js';

/** What the secret file outside the import root holds. */
export const SECRET = `${MARKER} secret bytes outside the import root\n`;

/** What the store holds: artifacts, blobs, chunks and pending writes. */
export function counts(host: Host): { artifacts: number; blobs: number; chunks: number; pending: number } {
  const d = host.diagnostics;
  return { artifacts: d.count('artifacts'), blobs: d.count('blobs'), chunks: d.count('chunks'), pending: d.count('pending') };
}

/** The HelixError a promise rejects with (a CheckFailure when it resolves or throws something else). */
export async function refusal(what: string, p: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  try {
    await p;
  } catch (e) {
    if (!isHelixError(e)) throw new CheckFailure(`${what} failed with an internal error: ${e instanceof Error ? e.stack : String(e)}`);
    return { code: e.code, message: e.message, hint: e.hint };
  }
  throw new CheckFailure(`${what} succeeded; it had to be refused`);
}

/** Fails unless importing `file` is refused with `code` and a message matching `message` and a hint. */
export async function expectImportRefused(ctx: CheckContext, host: Host, file: string, code: string, message: RegExp): Promise<number> {
  const t0 = performance.now();
  const r = await refusal(`importing ${file}`, host.artifacts.importFile(file));
  const ms = Math.round(performance.now() - t0);
  ctx.note(`import ${file}: ${r.code} in ${ms} ms: ${r.message}`);
  expect(
    r.code === code && message.test(r.message),
    `importing ${file}: ${r.code}: ${r.message}; expected ${code} matching ${String(message)}`,
  );
  expect((r.hint ?? '').length > 0, `importing ${file}: the refusal has no hint`);
  expectNoLeak(r.message, `the refusal of ${file}`);
  return ms;
}

/** A 2 MiB + 5 byte artifact (three 1 MiB chunks). */
export const bigContent = (): Buffer => Buffer.concat([Buffer.alloc(2 * 1024 * 1024, 'ACGT'), Buffer.from('tail\n')]);
