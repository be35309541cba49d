// Runs a toolpack's fixtures (the `health.fixtures` folder, one call per `*.json` file) through a
// real host. A fixture is `{ input, expect }` where `expect` is one of:
//   { output }                      the output, exactly;
//   { output_contains }             these fields of the output (objects may have more keys), for
//                                   outputs with values a fixture cannot know (times, run ids);
//   { error_code, error_details? }  the error's taxonomy code, and these fields of its details;
// and `forbidden`: the capabilities the run must be answered `forbidden` for (any other refusal
// fails the fixture). The file format is fixture-file.ts; the order and stores, run-suite.ts.
// Inputs may name the pack's data files (`"@data/<file>"`: imported as an artifact, the id
// substituted) and expected values may name their content (`"@artifact:data/<file>"`: an
// artifact whose bytes equal the file's). Every file is read as the loader reads: inside the
// toolpack, regular files only, within a bound (ABI-FILE-011).
import path from 'node:path';
import { FIXTURE_DATA_MAX_BYTES, inputBytesOf, MIB, type ResponseEnvelope, violationLines, type WireError } from '../../../abi/index.js';
import type { Host } from '../../5-host/host.js';
import { readPackFile } from '../../1-base/files/pack-files.js';
import type { WasmTool } from '../../5-host/toolpacks.js';
import { fixtureFiles, packDirOf, readFixtureFile, type Fixture, type FixtureFile } from './fixture-file.js';
import { forbiddenCalls, type RefusedCapability } from './refused-calls.js';

export { fixtureFiles, FixtureSchema, type Fixture } from './fixture-file.js';

/** The outcome of one fixture. */
export interface FixtureResult {
  readonly tool: string;
  readonly fixture: string;
  readonly ok: boolean;
  /** What differed, when not ok: the first difference, or why the fixture could not run. */
  readonly problem?: string;
  /** The call's response status, when the call was made. */
  readonly status?: string;
  /** Fuel the call used: what the manifest's `limits.fuel` is sized from (0 when replayed). */
  readonly fuel_used?: number;
  /** The bytes of the call's input artifacts as budgets count them (ABI-BUDGET-002), when it had any. */
  readonly input_bytes?: number;
  /**
   * Fuel per MiB of that input: what `limits.perInputMiB.fuel` is sized from. It includes the
   * call's fixed cost, so a fixture of a few KB overstates it; read it off a fixture of a few MB.
   */
  readonly fuel_per_input_mib?: number;
  /** The recorded run, for `helix runs show`. */
  readonly run_id?: string | null;
  /** True when the call replayed a run recorded earlier in the same store instead of executing. */
  readonly replayed?: boolean;
  /** The capabilities the run was answered `forbidden` for. */
  readonly forbidden?: readonly RefusedCapability[];
}

const DATA = '@data/';
const ARTIFACT = '@artifact:';

/**
 * Runs every fixture of `tool` on `host`, in file-name order, all in the host's one store: for
 * embedders and tests that own their host. `helix test` gives each fixture a fresh store
 * (run-suite.ts).
 */
export async function runFixtures(host: Host, tool: WasmTool): Promise<FixtureResult[]> {
  const results: FixtureResult[] = [];
  for (const file of fixtureFiles(tool.loaded)) results.push(await runFixture(host, tool, file));
  return results;
}

/** Runs one fixture file; a file that is not a valid fixture is a failed result saying why. */
export async function runFixture(host: Host, tool: WasmTool, file: string | FixtureFile): Promise<FixtureResult> {
  const packDir = packDirOf(tool.loaded);
  const entry = typeof file === 'string' ? readFixtureFile(file, packDir) : file;
  const base = { tool: tool.id, fixture: path.basename(entry.file) };
  if (!entry.ok) return { ...base, ok: false, problem: entry.problem };
  const fx: Fixture = entry.fixture;
  let input: Record<string, unknown>;
  try {
    input = (await substituteData(host, packDir, fx.input)) as Record<string, unknown>;
  } catch (err) {
    return { ...base, ok: false, problem: (err as Error).message };
  }
  const r = await host.call({ tool_id: tool.id, tool_version: tool.version, input });
  const forbidden = r.run_id === null ? [] : forbiddenCalls(host.runs, r.run_id);
  const inputBytes = r.run_id === null || r.replayed ? 0 : runInputBytes(host, r.run_id);
  const ran = {
    ...base,
    status: r.status,
    fuel_used: r.metrics.fuel_used,
    ...(inputBytes === 0 ? {} : { input_bytes: inputBytes, fuel_per_input_mib: Math.ceil(r.metrics.fuel_used / (inputBytes / MIB)) }),
    run_id: r.run_id,
    replayed: r.replayed,
    ...(forbidden.length === 0 ? {} : { forbidden }),
  };
  let problem = forbiddenProblem(forbidden, fx.expect.forbidden ?? []);
  try {
    problem ??= await check(host, packDir, fx.expect, r);
  } catch (err) {
    // A missing `@artifact:` file or artifact: the fixture cannot be checked.
    problem = (err as Error).message;
  }
  return { ...ran, ok: problem === undefined, ...(problem === undefined ? {} : { problem }) };
}

/** The input bytes of a recorded run, as its budgets counted them. */
function runInputBytes(host: Host, runId: string): number {
  const inputs = host.runs.get(runId)?.inputs ?? [];
  return inputBytesOf(inputs.map((i) => host.artifacts.get(i.artifact_id)));
}

/** How the refusals the run received differ from the ones the fixture expects, or undefined. */
function forbiddenProblem(got: readonly RefusedCapability[], expected: readonly string[]): string | undefined {
  const unexpected = got.filter((g) => !expected.includes(g.capability));
  if (unexpected.length > 0) {
    const names = unexpected.map((u) => u.capability);
    const what = unexpected.map((u) => `${u.capability} (${u.reason}${u.calls > 1 ? `, ${u.calls} calls` : ''})`).join(', ');
    const fix = unexpected.some((u) => u.reason.includes('policy'))
      ? 'have the policy grant it (helix test --policy FILE)'
      : "list it in the manifest's capabilities.allow";
    return `the code called ${what} and was answered forbidden (A-AUTH-FORBIDDEN): ${fix}, or expect the refusal with "forbidden": ${JSON.stringify(names)} in the fixture's expect`;
  }
  const missing = expected.filter((e) => !got.some((g) => g.capability === e));
  if (missing.length > 0)
    return `expected a forbidden answer to ${missing.join(', ')}, but the run received none${got.length > 0 ? ` (it was refused ${got.map((g) => g.capability).join(', ')})` : ''}`;
  return undefined;
}

/** The first way the response differs from what the fixture expects, or undefined. */
async function check(host: Host, packDir: string, expect: Fixture['expect'], r: ResponseEnvelope): Promise<string | undefined> {
  if (expect.error_code !== undefined) {
    if (r.error?.code !== expect.error_code)
      return `expected error ${expect.error_code}, got ${r.status}${r.error ? ` ${r.error.code}: ${r.error.message}${violationsBelow(r.error)}` : ''}`;
    return expect.error_details === undefined ? undefined : compare(host, packDir, expect.error_details, r.error.details, '/details', true);
  }
  if (r.status !== 'success')
    return `expected success, got ${r.error?.code}: ${r.error?.message}${r.error ? violationsBelow(r.error) : ''}`;
  return 'output' in expect
    ? compare(host, packDir, expect.output, r.output, '', false)
    : compare(host, packDir, expect.output_contains, r.output, '', true);
}

/** The most violations listed under a fixture's line. */
const VIOLATIONS_SHOWN = 10;

/**
 * The violations an error lists (a contract error's JSON pointers, with what the schema wanted
 * and what came), each on a line of its own under the fixture's line; empty when it lists none.
 */
function violationsBelow(error: WireError): string {
  const { lines, more } = violationLines(error.details, VIOLATIONS_SHOWN);
  const all = more > 0 ? [...lines, `... and ${more} more`] : lines;
  return all.map((l) => `\n      ${l}`).join('');
}

/** Replaces `"@data/<file>"` strings by the ids of freshly imported artifacts. */
async function substituteData(host: Host, packDir: string, value: unknown): Promise<unknown> {
  if (typeof value === 'string' && value.startsWith(DATA)) {
    return (await host.artifacts.importInline(dataFile(packDir, value.slice(1)), { label: value.slice(DATA.length) })).id;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => substituteData(host, packDir, v)));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await substituteData(host, packDir, v);
    return out;
  }
  return value;
}

/**
 * The first difference between expected and actual, honouring `@artifact:` values. With
 * `partial`, objects may carry keys the expected value does not name (at every depth); arrays
 * still match element for element.
 */
async function compare(
  host: Host,
  packDir: string,
  expected: unknown,
  actual: unknown,
  at: string,
  partial: boolean,
): Promise<string | undefined> {
  if (typeof expected === 'string' && expected.startsWith(ARTIFACT)) {
    if (typeof actual !== 'string') return `${at || '/'}: expected an artifact id, got ${JSON.stringify(actual)}`;
    const want = dataFile(packDir, expected.slice(ARTIFACT.length));
    const got = await host.artifacts.readBytes(actual, want.length + 1);
    return got.equals(want)
      ? undefined
      : `${at || '/'}: artifact ${actual} differs from ${expected.slice(ARTIFACT.length)}: ${firstDifference(want, got)}`;
  }
  if (Array.isArray(expected) || (typeof expected === 'object' && expected !== null)) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(expected) !== Array.isArray(actual))
      return `${at || '/'}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    if (Array.isArray(expected) && expected.length !== (actual as unknown[]).length)
      return `${at || '/'}: expected ${expected.length} items, got ${(actual as unknown[]).length}`;
    const keys = new Set([...Object.keys(expected), ...(partial && !Array.isArray(expected) ? [] : Object.keys(actual))]);
    for (const k of keys) {
      const e = (expected as Record<string, unknown>)[k];
      const a = (actual as Record<string, unknown>)[k];
      if (e === undefined && a !== undefined) return `${at}/${k}: unexpected ${JSON.stringify(a)}`;
      if (e !== undefined && a === undefined) return `${at}/${k}: missing, expected ${JSON.stringify(e)}`;
      const d = await compare(host, packDir, e, a, `${at}/${k}`, partial);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return Object.is(expected, actual) || JSON.stringify(expected) === JSON.stringify(actual)
    ? undefined
    : `${at || '/'}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** Where two byte strings first differ, with the line around it on each side. `got` may be cut one byte past `want`'s length. */
export function firstDifference(want: Buffer, got: Buffer): string {
  let i = 0;
  while (i < want.length && i < got.length && want[i] === got[i]) i++;
  if (i === want.length) return `it is longer (the file has ${want.length} bytes)`;
  if (i === got.length) return `it ends at byte ${got.length}, the file has ${want.length}`;
  const lineAt = (bytes: Buffer): string => {
    const start = i === 0 ? 0 : bytes.lastIndexOf(0x0a, i - 1) + 1;
    const end = bytes.indexOf(0x0a, i);
    return JSON.stringify(bytes.subarray(start, Math.min(end === -1 ? bytes.length : end, start + 120)).toString('utf8'));
  };
  const line = want.subarray(0, i).filter((b) => b === 0x0a).length + 1;
  return `first difference at byte ${i}, line ${line}: expected ${lineAt(want)}, got ${lineAt(got)}`;
}

/** The bytes of a data file of the pack; throws saying why when the path leaves it or the file is refused. */
function dataFile(packDir: string, relative: string): Buffer {
  const read = readPackFile(relative, packDir, packDir, FIXTURE_DATA_MAX_BYTES);
  if (!read.ok) throw new Error(`fixture data path ${relative} ${read.reason}`);
  return read.bytes;
}
