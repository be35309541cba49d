// The fixture file format (sdk-guest/GUIDE.md, "Fixtures and `helix test`") and how a pack's
// fixture files are found and read: inside the toolpack, regular files only, within a bound
// (ABI-FILE-011).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { FIXTURE_FILE_MAX_BYTES } from '../../../abi/index.js';
import { parseJsonText } from '../../1-base/files/documents.js';
import type { LoadedTool } from '../../5-host/toolpacks.js';
import { readPackFile, realDir, resolveInPack } from '../../1-base/files/pack-files.js';

// A capability name as a guest sends it: dotted lowercase segments (`http.request`, `kv.put`).
const CapabilityNameSchema = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/, 'must be a capability name such as "http.request"');

const ExpectSchema = z
  .strictObject({
    output: z.unknown().optional(),
    output_contains: z.unknown().optional(),
    error_code: z.string().min(1).optional(),
    error_details: z.record(z.string(), z.unknown()).optional(),
    /**
     * The capabilities whose calls the run must receive a `forbidden` answer to (each at least
     * once), and no others: a refusal the fixture does not name fails it.
     */
    forbidden: z.array(CapabilityNameSchema).min(1, 'list at least one capability, or leave forbidden out').optional(),
  })
  .refine(
    (e) => ['output', 'output_contains', 'error_code'].filter((k) => k in e).length === 1,
    'expect must have exactly one of output, output_contains, error_code',
  )
  .refine((e) => e.error_details === undefined || e.error_code !== undefined, 'expect.error_details needs expect.error_code');

/** One fixture file. */
export const FixtureSchema = z.strictObject({
  /** What the fixture checks, for people reading it. */
  description: z.string().optional(),
  /** The fixture (file name, with or without `.json`) this one runs after, in the same store. */
  continues: z.string().min(1).optional(),
  input: z.record(z.string(), z.unknown()),
  expect: ExpectSchema,
});
export type Fixture = z.infer<typeof FixtureSchema>;

/** A fixture file as read: parsed, or the reason it is not a fixture. */
export type FixtureFile = { readonly file: string; readonly name: string } & (
  | { readonly ok: true; readonly fixture: Fixture }
  | { readonly ok: false; readonly problem: string }
);

/** A fixture's name: its file name without `.json`. */
export function fixtureName(file: string): string {
  return path.basename(file).replace(/\.json$/, '');
}

/** The toolpack's directory, resolved as the loader resolves it. */
export function packDirOf(tool: Pick<LoadedTool, 'manifestPath'>): string {
  return realDir(path.dirname(tool.manifestPath));
}

/** The fixture files of a toolpack, in name order; empty when the manifest declares no fixtures folder. */
export function fixtureFiles(tool: Pick<LoadedTool, 'manifest' | 'manifestPath'>): string[] {
  const { manifest } = tool;
  if (manifest.health === undefined) return [];
  const packDir = packDirOf(tool);
  const resolved = resolveInPack(manifest.health.fixtures, packDir, packDir);
  if (!resolved.ok) throw new Error(`${manifest.health.fixtures} ${resolved.reason}`);
  const dir = resolved.file;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Reads and parses one fixture file of the pack in `packDir`. */
export function readFixtureFile(file: string, packDir: string): FixtureFile {
  const base = { file, name: fixtureName(file) };
  const failed = (problem: string): FixtureFile => ({ ...base, ok: false, problem });
  const read = readPackFile(path.basename(file), path.dirname(file), packDir, FIXTURE_FILE_MAX_BYTES);
  if (!read.ok) return failed(`the fixture file ${read.reason}`);
  const json = parseJsonText(read.bytes.toString('utf8'));
  if (!json.ok) return failed(`not a valid fixture: ${json.problems.map((p) => `${p.path.join('.') || '/'}: ${p.reason}`).join('; ')}`);
  const parsed = FixtureSchema.safeParse(json.value);
  if (!parsed.success)
    return failed(`not a valid fixture: ${parsed.error.issues.map((i) => `${i.path.join('.') || '/'}: ${i.message}`).join('; ')}`);
  return { ...base, ok: true, fixture: parsed.data };
}
