// `helix call`'s `"@file:PATH"`: a string of that form in a field the tool's input schema marks
// as an artifact (`x-helix-artifact`) is imported as `helix artifact import PATH` would (the
// policy's import roots, the same checks and errors, recorded with an `import` source) and
// replaced by the new artifact's id before the call. Any other field keeps the string as it is.
import path from 'node:path';
import semver from 'semver';
import { fromPointer, HelixError, isHelixError } from '../abi/index.js';
import type { Host } from '../host/5-host/host.js';

/** The prefix that names a file to import in an artifact field. */
export const FILE_PREFIX = '@file:';

/** The keyword of the violation an artifact field that holds no artifact id gives (host/4-calls/loader/json-schema.ts). */
const ARTIFACT_KEYWORD = 'x-helix-artifact';

/** One `@file:` reference imported for the call. */
export interface FileImport {
  /** JSON pointer of the field in the input. */
  readonly field: string;
  /** The path as given after `@file:`. */
  readonly path: string;
  readonly artifact_id: string;
}

/** Whether any string in `value` starts with `@file:` (so the tool's schema need not be consulted otherwise). */
function mentionsFile(value: unknown): boolean {
  if (typeof value === 'string') return value.startsWith(FILE_PREFIX);
  if (Array.isArray(value)) return value.some(mentionsFile);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(mentionsFile);
  return false;
}

function at(value: unknown, pointer: string): unknown {
  let here = value;
  for (const s of fromPointer(pointer)) {
    if (typeof here !== 'object' || here === null) return undefined;
    here = (here as Record<string, unknown>)[s];
  }
  return here;
}

function setAt(value: unknown, pointer: string, replacement: string): void {
  const steps = fromPointer(pointer);
  let here = value as Record<string, unknown>;
  for (const s of steps.slice(0, -1)) here = here[s] as Record<string, unknown>;
  here[steps[steps.length - 1]!] = replacement;
}

/**
 * The artifact fields of `input` that hold `@file:PATH`, as the input schema of the tool the
 * call resolves to decides it: the fields whose string the schema's artifact keyword refuses.
 * None when no loaded tool matches (the call then reports that).
 */
export function fileFields(host: Host, toolId: string, versionRange: string, input: unknown): string[] {
  if (!mentionsFile(input)) return [];
  const valid = semver.validRange(versionRange);
  const tool = host
    .tools()
    .find((t) => t.id === toolId && valid !== null && semver.satisfies(t.version, versionRange, { includePrerelease: true }));
  if (tool === undefined) return [];
  const fields = tool
    .validateInput(input)
    .violations.filter((v) => v.keyword === ARTIFACT_KEYWORD)
    .map((v) => v.path)
    .filter((p) => {
      const value = at(input, p);
      return typeof value === 'string' && value.startsWith(FILE_PREFIX);
    });
  return [...new Set(fields)].sort();
}

/**
 * Imports the file of each `@file:` artifact field and returns the input with their ids in
 * place (a copy; `input` is left as it was). A failed import throws the import's error with
 * the field in its details and a hint naming the import roots; nothing is called then.
 */
export async function importFileFields(
  host: Host,
  toolId: string,
  versionRange: string,
  input: unknown,
): Promise<{ input: unknown; imports: FileImport[] }> {
  const fields = fileFields(host, toolId, versionRange, input);
  if (fields.length === 0) return { input, imports: [] };
  const copy = structuredClone(input);
  const imports: FileImport[] = [];
  for (const field of fields) {
    const file = (at(input, field) as string).slice(FILE_PREFIX.length);
    let id: string;
    try {
      id = (await host.artifacts.importFile(file)).id;
    } catch (err) {
      if (!isHelixError(err)) throw err;
      throw new HelixError(err.code, {
        message: `${field} is "${FILE_PREFIX}${file}": ${err.message}`,
        details: { ...err.details, field },
        hint: `"${FILE_PREFIX}PATH" imports the file as helix artifact import does, under the policy's import roots (${rootsOf(host).join(', ')}): ${err.hint}`,
      });
    }
    setAt(copy, field, id);
    imports.push({ field, path: file, artifact_id: id });
  }
  return { input: copy, imports };
}

function rootsOf(host: Host): string[] {
  const roots = host.policy.policy.paths.importRoots;
  return roots.length === 0 ? ['none: paths.importRoots is empty'] : roots.map((r) => path.resolve(r));
}
