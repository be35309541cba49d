// The files of the directories fan-out moves between machines (abi/ABI.md, "Fan-out"): job and
// result bundles and a job array's array.json. JSON read bounded from a regular file and checked
// against its schema (I-REQ-JOB-BUNDLE naming the file), written by a rename so a reader finds it
// whole or not at all, and the new directories they are written into.
import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';
import { HelixError } from '../../../abi/index.js';
import { readRegularFile } from './pack-files.js';

/** The longest job.json or result.json read (a result's journal holds one entry per capability call). */
export const BUNDLE_JSON_MAX_BYTES = 256 * 1024 * 1024;

/** I-REQ-JOB-BUNDLE naming the file and what is wrong. */
export function bundleError(file: string, problem: string, violations: readonly string[] = []): HelixError {
  return new HelixError('I-REQ-JOB-BUNDLE', {
    message: `The bundle file ${file} ${problem}.`,
    details: { file, problem, ...(violations.length === 0 ? {} : { violations: [...violations] }) },
  });
}

/** Reads a bundle's text file (a regular file, bounded); I-REQ-JOB-BUNDLE when it cannot be read. */
export function readBundleText(file: string, maxBytes = BUNDLE_JSON_MAX_BYTES): string {
  const read = readRegularFile(file, maxBytes);
  if (!read.ok) throw bundleError(file, read.reason);
  return read.bytes.toString('utf8');
}

/** Reads and parses a bundle's JSON file against `schema`; I-REQ-JOB-BUNDLE listing every violation. */
export function readBundleJson<S extends z.ZodType>(file: string, schema: S): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(readBundleText(file));
  } catch (err) {
    if (err instanceof HelixError) throw err;
    throw bundleError(file, `is not JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw bundleError(
      file,
      'does not match the bundle format',
      parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`),
    );
  return parsed.data;
}

/** Writes a bundle's JSON file by a rename from a partial file of this process, so readers find it whole or not at all. */
export function writeBundleJson(file: string, value: unknown): void {
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(partial, file);
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
