// Tests of the run crate export and its profile checker against a real LMDB store holding a
// three-run chain: A makes art1, B reads art1 and makes art2, C reads art2 and an imported art0.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ArtifactRecordSchema, RunRecordSchema, type RunLink, type RunRecord } from '../../../abi/index.js';
import type { HelixError } from '../../../abi/index.js';
import { getArtifact } from '../artifacts/query.js';
import { canonicalJson } from '../../1-base/hashing.js';
import { commitBlob, writeChunks } from '../../3-store/blobs.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { checkRunCrate } from './ro-crate-profile.js';
import { buildRunCrate, exportRunCrate, WORKFLOW_FILE } from './ro-crate.js';
import { requireRun } from '../runs/run-store.js';

const hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');
const artId = (n: number): string => `art_01JAAAAAAAAAAAAAAAAAAAAA${String(n).padStart(2, '0')}`;
const RUN = { A: `run_${'a'.repeat(32)}`, B: `run_${'b'.repeat(32)}`, C: `run_${'c'.repeat(32)}` };
const ART = { art0: artId(0), art1: artId(1), art2: artId(2), art3: artId(3), logA: artId(11), logB: artId(12), logC: artId(13) };
const BYTES: Record<string, string> = {
  art0: '>ref\nACGTACGT\n',
  art1: '>a\nGGCC\n',
  art2: '{"gc":0.5}\n',
  art3: 'id\tgc\na\t0.5\n',
  logA: 'A ran\n',
  logB: 'B ran\n',
  logC: 'C ran\n',
};
const POLICY = canonicalJson({ tools: { allow: ['*'] } });

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'helix-crate-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function putArtifact(
  store: Store,
  key: keyof typeof ART,
  type: string,
  createdAt: number,
  creator: { run: string; role: string } | null,
): Promise<RunLink> {
  const blob = await writeChunks(
    store,
    (async function* () {
      yield Buffer.from(BYTES[key] as string);
    })(),
  );
  commitBlob(store, blob);
  const record = ArtifactRecordSchema.parse({
    id: ART[key],
    sha256: blob.sha256,
    size: blob.size,
    type,
    compression: null,
    media_type: type === 'json' ? 'application/json' : 'text/plain',
    label: key.startsWith('log') ? 'log' : `${key}.${type}`,
    created_at: createdAt,
    created_by_run: creator?.run ?? null,
    source:
      creator === null
        ? { kind: 'import', path: '/private/import/ref.fasta', mtime_ms: 1 }
        : { kind: 'run', run_id: creator.run, role: creator.role },
    preview: { text: null, truncated: false },
  });
  rawDatabases(store).artifacts.putSync(record.id, record);
  return { role: creator?.role ?? 'import', artifact_id: record.id, sha256: blob.sha256 };
}

function putRun(store: Store, runId: string, tool: string, at: number, inputs: RunLink[], outputs: RunLink[], log: RunLink): RunRecord {
  const params = canonicalJson({ tool: { id: tool, version: '1.0.0' }, input: inputs.map((l) => `sha256:${l.sha256}`) });
  rawDatabases(store).params.putSync(`sha256:${hex(params)}`, params);
  rawDatabases(store).policies.putSync(`sha256:${hex(POLICY)}`, POLICY);
  const run = RunRecordSchema.parse({
    run_id: runId,
    tool_id: tool,
    tool_version: '1.0.0',
    contract_version: 'v1',
    module_digest: `sha256:${hex(tool)}`,
    policy_hash: `sha256:${hex(POLICY)}`,
    params_hash: `sha256:${hex(params)}`,
    status: 'succeeded',
    attempts: 1,
    created_at: at,
    started_at: at,
    finished_at: at + 50,
    owner: null,
    metrics: { duration_ms: 50, fuel_used: 1234, memory_peak_pages: 2 },
    result: { status: 'success', output: {}, warnings: [] },
    inputs,
    outputs: outputs.map((l) => ({ ...l, role: 'out' })),
    log_artifact_id: log.artifact_id,
    idempotency_key: null,
    last_call_id: null,
  });
  rawDatabases(store).runs.putSync(runId, run);
  return run;
}

/** A store holding the chain A -> B -> C, with C also reading the imported art0. */
async function chainStore(): Promise<Store> {
  const store = openStore(path.join(await tempDir(), 'home'));
  cleanup.push(() => store.close());
  const art0 = await putArtifact(store, 'art0', 'fasta', 500, null);
  const art1 = await putArtifact(store, 'art1', 'fasta', 1040, { run: RUN.A, role: 'out' });
  const logA = await putArtifact(store, 'logA', 'text', 1045, { run: RUN.A, role: 'log' });
  putRun(store, RUN.A, 'seq.make', 1000, [], [art1], logA);
  const art2 = await putArtifact(store, 'art2', 'json', 2040, { run: RUN.B, role: 'out' });
  const logB = await putArtifact(store, 'logB', 'text', 2045, { run: RUN.B, role: 'log' });
  putRun(store, RUN.B, 'seq.gc', 2000, [{ ...art1, role: 'reads' }], [art2], logB);
  const art3 = await putArtifact(store, 'art3', 'tsv', 3040, { run: RUN.C, role: 'out' });
  const logC = await putArtifact(store, 'logC', 'text', 3045, { run: RUN.C, role: 'log' });
  putRun(
    store,
    RUN.C,
    'seq.report',
    3000,
    [
      { ...art2, role: 'stats' },
      { ...art0, role: 'reference' },
    ],
    [art3],
    logC,
  );
  return store;
}

type Graph = Array<Record<string, unknown>>;
const graphOf = (metadata: Record<string, unknown>): Graph => metadata['@graph'] as Graph;
const entity = (metadata: Record<string, unknown>, id: string): Record<string, unknown> =>
  graphOf(metadata).find((e) => e['@id'] === id) as Record<string, unknown>;

async function codeOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    return (err as HelixError).code;
  }
  return 'none';
}

describe('exportRunCrate', () => {
  it('exports a run with its ancestry as a crate that passes the profile checker, with verified data', async () => {
    const store = await chainStore();
    const dest = path.join(await tempDir(), 'crate');
    const crate = await exportRunCrate(store, RUN.C, dest, { includeData: true });

    expect(checkRunCrate(crate.metadata)).toEqual([]);
    expect(crate.runs).toEqual([RUN.A, RUN.B, RUN.C]);
    expect(crate.files.map((f) => f.artifactId).sort()).toEqual(Object.values(ART).sort());
    for (const run of Object.values(RUN)) expect(entity(crate.metadata, `#${run}`)['@type']).toBe('CreateAction');
    const steps = (JSON.parse(await readFile(path.join(dest, WORKFLOW_FILE), 'utf8')) as { steps: Array<{ run_id: string }> }).steps;
    expect(steps.map((s) => s.run_id)).toEqual([RUN.A, RUN.B, RUN.C]);

    for (const file of crate.files) {
      const bytes = await readFile(path.join(dest, ...file.path.split('/')));
      expect(file.path.startsWith(`data/${file.artifactId}/`)).toBe(true);
      expect(hex(bytes)).toBe(file.sha256);
      expect(bytes.length).toBe(file.size);
    }
    const written = JSON.parse(await readFile(path.join(dest, 'ro-crate-metadata.json'), 'utf8')) as Record<string, unknown>;
    expect(written).toEqual(crate.metadata);
    for (const doc of crate.documents) expect(await readFile(path.join(dest, doc.path), 'utf8')).toBe(doc.text);
  });

  it('describes what produced a file, from what, under which policy', async () => {
    const store = await chainStore();
    const { metadata, files } = buildRunCrate(store, RUN.C);
    const art2 = files.find((f) => f.artifactId === ART.art2)?.path as string;
    const producer = graphOf(metadata).find((e) => e['@type'] === 'CreateAction' && JSON.stringify(e.result).includes(art2)) as Record<
      string,
      unknown
    >;
    expect(producer.identifier).toBe(RUN.B);
    const tool = entity(metadata, (producer.instrument as { '@id': string })['@id']);
    expect(tool).toMatchObject({
      '@type': 'SoftwareApplication',
      name: 'seq.gc',
      softwareVersion: '1.0.0',
      identifier: `sha256:${hex('seq.gc')}`,
    });
    const objects = (producer.object as Array<{ '@id': string }>).map((o) => o['@id']);
    expect(objects).toContain(files.find((f) => f.artifactId === ART.art1)?.path);
    expect(objects).toContain(`policies/${hex(POLICY)}.json`);
    expect(entity(metadata, `policies/${hex(POLICY)}.json`).identifier).toBe(`sha256:${hex(POLICY)}`);
    expect(entity(metadata, files.find((f) => f.artifactId === ART.art0)?.path as string).description).not.toContain('/private/import');
    const chain = entity(metadata, `#chain/${RUN.C}`);
    expect(chain.instrument).toEqual({ '@id': WORKFLOW_FILE });
    expect(chain.object).toEqual({ '@id': files.find((f) => f.artifactId === ART.art0)?.path });
  });

  it('exports a run without ancestors alone, and without data unless asked', async () => {
    const store = await chainStore();
    const dest = path.join(await tempDir(), 'crate-a');
    const crate = await exportRunCrate(store, RUN.A, dest);
    expect(checkRunCrate(crate.metadata)).toEqual([]);
    expect(crate.runs).toEqual([RUN.A]);
    expect(crate.files.map((f) => f.artifactId).sort()).toEqual([ART.art1, ART.logA]);
    expect(
      graphOf(crate.metadata)
        .filter((e) => e['@type'] === 'CreateAction')
        .map((e) => e['@id']),
    ).toEqual([`#chain/${RUN.A}`, `#${RUN.A}`]);
    expect(existsSync(path.join(dest, 'data'))).toBe(false);
    expect((await readdir(dest)).sort()).toEqual([WORKFLOW_FILE, 'params', 'policies', 'ro-crate-metadata.json']);
  });

  it('refuses an unknown run and a non-empty destination, and accepts an empty one', async () => {
    const store = await chainStore();
    const base = await tempDir();
    expect(await codeOf(() => buildRunCrate(store, `run_${'f'.repeat(32)}`))).toBe('P-PRECOND-RUN-NOT-FOUND');
    expect(await codeOf(() => exportRunCrate(store, `run_${'f'.repeat(32)}`, path.join(base, 'x')))).toBe('P-PRECOND-RUN-NOT-FOUND');
    await mkdir(path.join(base, 'full'));
    await writeFile(path.join(base, 'full', 'keep.txt'), 'mine');
    expect(await codeOf(() => exportRunCrate(store, RUN.C, path.join(base, 'full')))).toBe('P-PRECOND-PATH');
    expect(await readdir(path.join(base, 'full'))).toEqual(['keep.txt']);
    expect(await codeOf(() => exportRunCrate(store, RUN.C, path.join(base, 'no', 'parent')))).toBe('P-PRECOND-PATH');
    await mkdir(path.join(base, 'empty'));
    await exportRunCrate(store, RUN.C, path.join(base, 'empty'));
    expect(existsSync(path.join(base, 'empty', 'ro-crate-metadata.json'))).toBe(true);
  });

  it('fails on a tampered chunk with D-DATA-CHECKSUM and leaves no partial crate', async () => {
    const store = await chainStore();
    const sha = hex(BYTES.art2 as string);
    const chunk = rawDatabases(store).blobs.get(sha)?.chunks[0] as string;
    rawDatabases(store).chunks.putSync(chunk, Buffer.from('{"gc":0.9}\n'));
    const base = await tempDir();
    expect(await codeOf(() => exportRunCrate(store, RUN.C, path.join(base, 'crate'), { includeData: true }))).toBe('D-DATA-CHECKSUM');
    expect(await readdir(base)).toEqual([]);
  });

  it('fails when stored params no longer match their hash', async () => {
    const store = await chainStore();
    const hash = (rawDatabases(store).runs.get(RUN.B) as RunRecord).params_hash;
    rawDatabases(store).params.putSync(hash, '{"tampered":true}');
    expect(await codeOf(() => buildRunCrate(store, RUN.C))).toBe('D-DATA-CHECKSUM');
  });

  it('fails when a run links an artifact under another hash than the artifact has', async () => {
    const store = await chainStore();
    const run = rawDatabases(store).runs.get(RUN.B) as RunRecord;
    rawDatabases(store).runs.putSync(RUN.B, { ...run, inputs: [{ ...(run.inputs[0] as RunLink), sha256: hex('other') }] });
    expect(await codeOf(() => buildRunCrate(store, RUN.C))).toBe('D-DATA-CHECKSUM');
  });
});

describe('exportRunCrate on damaged records', () => {
  /** What `fn` throws, as the fields a user sees. */
  const failureOf = async (fn: () => unknown): Promise<{ name: string; code: string; message: string }> => {
    try {
      await fn();
    } catch (err) {
      const e = err as HelixError;
      return { name: e.name, code: e.code, message: e.message };
    }
    throw new Error('it did not fail');
  };

  it('exportRunCrate reports a damaged run record as the D-DATA-RECORD-INVALID the run reads report, not a ZodError', async () => {
    const store = await chainStore();
    const run = rawDatabases(store).runs.get(RUN.B) as RunRecord;
    rawDatabases(store).runs.putSync(RUN.B, { ...run, status: 'exploded' } as never);
    const base = await tempDir();
    const exported = await failureOf(() => exportRunCrate(store, RUN.C, path.join(base, 'crate'), { includeData: true }));
    expect(exported).toMatchObject({ name: 'HelixError', code: 'D-DATA-RECORD-INVALID' });
    expect(exported.message).toContain(RUN.B);
    expect(exported).toEqual(await failureOf(() => requireRun(store, RUN.B)));
    expect(await readdir(base)).toEqual([]);
  });

  it('exportRunCrate reports a damaged artifact record as the D-DATA-RECORD-INVALID getArtifact reports, not a ZodError', async () => {
    const store = await chainStore();
    const record = rawDatabases(store).artifacts.get(ART.art1)!;
    rawDatabases(store).artifacts.putSync(ART.art1, { ...record, size: -5 });
    const base = await tempDir();
    const exported = await failureOf(() => exportRunCrate(store, RUN.C, path.join(base, 'crate')));
    expect(exported).toMatchObject({ name: 'HelixError', code: 'D-DATA-RECORD-INVALID' });
    expect(exported.message).toContain(ART.art1);
    expect(exported).toEqual(await failureOf(() => getArtifact(store, ART.art1)));
    expect(await readdir(base)).toEqual([]);
  });
});

describe('buildRunCrate', () => {
  it('builds identical JSON twice and from two stores with the same content', async () => {
    const one = await chainStore();
    const two = await chainStore();
    const first = JSON.stringify(buildRunCrate(one, RUN.C));
    expect(JSON.stringify(buildRunCrate(one, RUN.C))).toBe(first);
    expect(JSON.stringify(buildRunCrate(two, RUN.C))).toBe(first);
  });

  it('survives an ancestry cycle in a damaged store', async () => {
    const store = await chainStore();
    const art1 = rawDatabases(store).artifacts.get(ART.art1);
    const run = rawDatabases(store).runs.get(RUN.A) as RunRecord;
    // A now also reads art2, which B made from A's art1.
    rawDatabases(store).runs.putSync(RUN.A, {
      ...run,
      inputs: [{ role: 'loop', artifact_id: ART.art2, sha256: hex(BYTES.art2 as string) }],
    });
    const crate = buildRunCrate(store, RUN.C);
    expect(art1).toBeDefined();
    expect(crate.runs.sort()).toEqual([RUN.A, RUN.B, RUN.C]);
    expect(checkRunCrate(crate.metadata)).toEqual([]);
  });
});

describe('checkRunCrate', () => {
  const broken = async (edit: (metadata: Record<string, unknown>) => void): Promise<string[]> => {
    const metadata = structuredClone(buildRunCrate(await chainStore(), RUN.C).metadata);
    edit(metadata);
    return checkRunCrate(metadata);
  };

  it('reports a missing mainEntity', async () => {
    const violations = await broken((m) => delete entity(m, './').mainEntity);
    expect(violations).toContainEqual(expect.stringMatching(/Workflow Run Crate 0\.5.*no mainEntity/));
  });

  it('reports a CreateAction without instrument', async () => {
    const violations = await broken((m) => delete entity(m, `#${RUN.B}`).instrument);
    expect(violations).toContainEqual(`[Process Run Crate 0.5] CreateAction #${RUN.B} has no instrument`);
  });

  it('reports a referenced File missing from the graph', async () => {
    const store = await chainStore();
    const { metadata, files } = buildRunCrate(store, RUN.C);
    const art0 = files.find((f) => f.artifactId === ART.art0)?.path as string;
    metadata['@graph'] = graphOf(metadata).filter((e) => e['@id'] !== art0);
    const violations = checkRunCrate(metadata);
    expect(violations).toContainEqual(`[RO-Crate 1.1 JSON-LD] #${RUN.C}.object references ${art0}, which is not in @graph`);
  });

  it('reports a root without conformsTo', async () => {
    const violations = await broken((m) => delete entity(m, './').conformsTo);
    expect(violations).toContainEqual(expect.stringMatching(/root conformsTo must include https:\/\/w3id\.org\/ro\/wfrun\/workflow\/0\.5/));
  });

  it('reports a data entity left out of the root hasPart and a root without license', async () => {
    const violations = await broken((m) => {
      const root = entity(m, './');
      root.hasPart = (root.hasPart as Array<{ '@id': string }>).filter((p) => p['@id'] !== WORKFLOW_FILE);
      delete root.license;
    });
    expect(violations).toContain(`[RO-Crate 1.1 data entities] ${WORKFLOW_FILE} is a data entity not in the root's hasPart`);
    expect(violations).toContain('[Workflow RO-Crate 1.0] the root has no license');
  });

  it('rejects what is not a crate at all', () => {
    expect(checkRunCrate(null)).toHaveLength(1);
    expect(checkRunCrate({ '@context': 'x', '@graph': [] })).toEqual(
      expect.arrayContaining([expect.stringMatching(/@context/), expect.stringMatching(/Descriptor/)]),
    );
  });
});
