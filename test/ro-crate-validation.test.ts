// The RO-Crate export checked by someone other than Helix: ro-crate-js (npm `ro-crate`, Language
// Research Technology) validates crates exported through the CLI from real runs, offline, with
// the contexts the crate names resolved from vendored copies (test/fixtures/ro-crate/README.md).
import { cpSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import { checkRunCrate } from '../host/4-calls/provenance/ro-crate-profile.js';
import { runCli } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

/** What this test uses of ro-crate-js (its published typings leave out the Validator). */
interface ValidatorResult {
  readonly id: string;
  readonly status: 'success' | 'warning' | 'error';
  readonly message: string;
  readonly entity?: string;
}
interface RoCrateApi {
  Validator: new () => {
    results: ValidatorResult[];
    crate: {
      __contextCache: Record<string, unknown>;
      resolveTerm(term: string): string | undefined;
      entities(): Iterable<Record<string, unknown>>;
    } | null;
    parseJSON(json: unknown): void;
    rootDataEntity(): void;
    checkFiles(files: Record<string, { exists: boolean; isDir: boolean }>): void;
  };
}
const { Validator } = createRequire(import.meta.url)('ro-crate') as RoCrateApi;

const FIXTURES = path.join(packageRoot(), 'test', 'fixtures', 'ro-crate');
const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
/** The published contexts by URL, each as the term map ro-crate-js looks terms up in. */
const CONTEXTS: Record<string, unknown> = {
  'https://w3id.org/ro/crate/1.1/context': (readJson(path.join(FIXTURES, 'ro-crate-1.1-context.jsonld')) as { '@context': unknown })[
    '@context'
  ],
  'https://w3id.org/ro/terms/workflow-run/context': Object.assign(
    {},
    ...(readJson(path.join(FIXTURES, 'workflow-run-context.json')) as unknown[]).filter((c) => typeof c === 'object'),
  ),
};

let t: { dir: string; cleanup: () => void };
let root: string;
const helix = (args: readonly string[]) => runCli([...args, '--home', path.join(root, 'home')], root);

async function callOk(toolId: string, input: Record<string, unknown>): Promise<{ run_id: string; output: Record<string, unknown> }> {
  const r = await helix(['call', toolId, '--input', JSON.stringify(input)]);
  const envelope = JSON.parse(r.stdout) as { status: string; run_id: string; output: Record<string, unknown> };
  expect(envelope.status, r.stdout + r.stderr).toBe('success');
  return envelope;
}

/** Every file and directory under `dir`, by crate-relative path (directories end in /). */
function filesUnder(dir: string, prefix = ''): Record<string, { exists: boolean; isDir: boolean }> {
  const out: Record<string, { exists: boolean; isDir: boolean }> = {};
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      out[`${rel}/`] = { exists: true, isDir: true };
      Object.assign(out, filesUnder(dir, `${rel}/`));
    } else out[rel] = { exists: true, isDir: false };
  }
  return out;
}

/** ro-crate-js's validation of the crate in `dir`: its results, and the validator to look terms up with. */
function validate(dir: string): { results: ValidatorResult[]; validator: InstanceType<RoCrateApi['Validator']> } {
  const validator = new Validator();
  validator.parseJSON(readFileSync(path.join(dir, 'ro-crate-metadata.json'), 'utf8'));
  expect(validator.crate, 'ro-crate-js parsed the crate').not.toBeNull();
  // Offline: the contexts the crate names come from the vendored copies, not the network.
  Object.assign(validator.crate!.__contextCache, CONTEXTS);
  validator.rootDataEntity();
  validator.checkFiles(filesUnder(dir));
  return { results: validator.results, validator };
}

/** Every property and type name the crate's entities use, and those no named context defines. */
function termsOf(validator: InstanceType<RoCrateApi['Validator']>): { terms: string[]; undefinedTerms: string[] } {
  const crate = validator.crate!;
  const terms = new Set<string>();
  for (const entity of crate.entities()) {
    for (const term of Object.keys(entity).filter((k) => !k.startsWith('@'))) terms.add(term);
    for (const type of [entity['@type']].flat() as string[]) terms.add(type);
  }
  const undefinedTerms = [...terms].filter((term) => !/^https?:\/\//.test(crate.resolveTerm(term) ?? '')).sort();
  return { terms: [...terms].sort(), undefinedTerms };
}

const exported: Record<string, string> = {};
beforeAll(async () => {
  t = tempDir('helix-crate-validation-');
  root = realpathSync(t.dir);
  cpSync(path.join(packageRoot(), 'plugins', 'fastq-filter', 'data', 'reads.fq'), path.join(root, 'reads.fq'));
  // A chain of three runs: an import, a filter, and a filter of the filtered reads.
  const imported = await callOk('helix.artifact_import', { path: path.join(root, 'reads.fq'), label: 'reads' });
  const first = await callOk('fastq.filter', { reads: imported.output.id, min_length: 20 });
  const second = await callOk('fastq.filter', { reads: first.output.filtered, min_length: 30 });
  for (const [name, args] of [
    ['with-data', []],
    ['metadata-only', ['--no-data']],
  ] as const) {
    const dir = path.join(root, name);
    const r = await helix(['runs', 'export', second.run_id, dir, ...args]);
    expect(r.code, r.stderr).toBe(0);
    exported[name] = dir;
  }
}, 180_000);
afterAll(() => t?.cleanup());

describe('an exported run crate, validated by ro-crate-js', () => {
  it('has no errors: a flattened graph, a root Dataset with its required properties, every data entity on disk', () => {
    const { results } = validate(exported['with-data']!);
    expect(results.filter((r) => r.status === 'error')).toEqual([]);
    // The root entity checks ran and passed, each by name.
    const passed = new Set(results.filter((r) => r.status === 'success').map((r) => r.id));
    for (const id of [
      'validCrateMustBeJson',
      '@typeRequired',
      '@idRequired',
      'nameRequired',
      'descriptionRequired',
      'datePublishedRequired',
      'licenseRequired',
      'datePublishedFormat',
    ]) {
      expect(passed, id).toContain(id);
    }
    // Every file on disk is described by an entity (the folders of artifacts are plain folders).
    expect(results.filter((r) => r.status === 'warning' && !r.entity?.endsWith('/'))).toEqual([]);
  });

  it('uses only terms that the contexts it names define, so no property is lost to a JSON-LD reader', () => {
    const { validator } = validate(exported['with-data']!);
    const { terms, undefinedTerms } = termsOf(validator);
    expect(undefinedTerms).toEqual([]);
    // Among them the workflow-run term for checksums and the schema.org terms of a run.
    expect(terms).toEqual(expect.arrayContaining(['sha256', 'CreateAction', 'instrument', 'object', 'result', 'conformsTo']));
  });

  it('catches a damaged copy: a root without a license and a term no context defines', () => {
    const dir = path.join(root, 'damaged');
    cpSync(exported['with-data']!, dir, { recursive: true });
    const metadata = readJson(path.join(dir, 'ro-crate-metadata.json')) as { '@graph': Array<Record<string, unknown>> };
    const rootEntity = metadata['@graph'].find((e) => e['@id'] === './')!;
    delete rootEntity.license;
    rootEntity.helixOnly = 'x';
    writeFileSync(path.join(dir, 'ro-crate-metadata.json'), JSON.stringify(metadata));
    const { results, validator } = validate(dir);
    expect(results.filter((r) => r.status === 'error').map((r) => r.id)).toEqual(['licenseRequired']);
    expect(termsOf(validator).undefinedTerms).toEqual(['helixOnly']);
  });

  it('without data (--no-data) still has a valid root, and ro-crate-js names each absent file', () => {
    const { results } = validate(exported['metadata-only']!);
    const errors = results.filter((r) => r.status === 'error');
    // Only the artifact files are absent, each reported as a missing data entity.
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e.id === 'validCrateDataEntityPath' && e.entity?.startsWith('data/'))).toBe(true);
  });

  it('agrees with the project checker (ro-crate-profile.ts) on the same crate', () => {
    expect(checkRunCrate(readJson(path.join(exported['with-data']!, 'ro-crate-metadata.json')) as Record<string, unknown>)).toEqual([]);
  });
});
