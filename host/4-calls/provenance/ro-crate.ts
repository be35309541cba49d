// Exports a run and every run that produced its inputs as a Workflow Run RO-Crate, so an operator
// can answer "what produced this file, from what, under which policy?" in WorkflowHub, Galaxy or
// runcrate. The profiles and their versions are in ro-crate-profile.ts.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ArtifactRecord, RunLink, RunRecord, RunStatus } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';
import { readArtifactRecord } from '../../3-store/artifact-records.js';
import { readBlob } from '../../3-store/blobs.js';
import { readParams, readPolicy } from '../../3-store/documents.js';
import type { Store } from '../../3-store/open-store.js';
import { RO_CRATE_CONTEXT, RO_CRATE_SPEC, RUN_CRATE_PROFILES, WORKFLOW_RO_CRATE, WORKFLOW_RUN_CONTEXT } from './ro-crate-profile.js';
import { observeRun } from '../runs/run-store.js';

/** The file the main workflow entity points at: the chain of runs as Helix executed it. */
export const WORKFLOW_FILE = 'helix-chain.json';

/** A small file of the crate besides artifacts, with its content. */
export interface CrateDocument {
  path: string;
  text: string;
  sha256: string;
}

/** A built crate: its metadata, the artifact files it describes, and its runs in ancestry order. */
export interface RunCrate {
  metadata: Record<string, unknown>;
  files: Array<{ path: string; artifactId: string; sha256: string; size: number }>;
  runs: string[];
  /** Small files the metadata describes besides artifacts: the chain description, params, policies. */
  documents: CrateDocument[];
}

/** Options of a crate. */
export interface RunCrateOptions {
  /** The license of the crate's content (an SPDX or other URI); unspecified by default. */
  readonly license?: { readonly id: string; readonly name: string };
}

const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A run through the checked reads, with a dead owner's run shown as interrupted. */
function readRun(store: Store, runId: string, neededFor?: string): RunRecord {
  const run = observeRun(store, runId);
  if (run === undefined) {
    const message =
      neededFor === undefined
        ? `No run ${runId} is in the store ${store.home}.`
        : `Run ${runId}, which produced ${neededFor}, is not in the store ${store.home}.`;
    throw new HelixError('P-PRECOND-RUN-NOT-FOUND', {
      message,
      details: { run_id: runId, ...(neededFor === undefined ? {} : { produced: neededFor }) },
    });
  }
  return run;
}

/** The artifact a run links, checked against the hash the run recorded for it. */
function readLinked(store: Store, runId: string, artifactId: string, sha256: string | null): ArtifactRecord {
  const record = readArtifactRecord(store, artifactId);
  if (record === undefined) {
    throw new HelixError('P-PRECOND-ARTIFACT-NOT-FOUND', {
      message: `Artifact ${artifactId} of run ${runId} is not in the store.`,
      details: { artifact_id: artifactId, run_id: runId },
    });
  }
  if (sha256 !== null && record.sha256 !== sha256) {
    throw new HelixError('D-DATA-CHECKSUM', {
      message: `Run ${runId} recorded artifact ${artifactId} with sha256 ${sha256}, but the artifact record says ${record.sha256}.`,
      details: { run_id: runId, artifact_id: artifactId, linked: sha256, recorded: record.sha256 },
    });
  }
  return record;
}

const producerOf = (a: ArtifactRecord): string | null => a.created_by_run ?? (a.source.kind === 'run' ? a.source.run_id : null);

/** The run, its ancestors through their input artifacts (each once, cycle-safe), and every artifact they link. */
function collectChain(store: Store, runId: string): { runs: Map<string, RunRecord>; artifacts: Map<string, ArtifactRecord> } {
  const runs = new Map<string, RunRecord>();
  const artifacts = new Map<string, ArtifactRecord>();
  const pending: Array<{ id: string; neededFor?: string }> = [{ id: runId }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (runs.has(next.id)) continue;
    const run = readRun(store, next.id, next.neededFor);
    runs.set(run.run_id, run);
    const links: Array<Pick<RunLink, 'artifact_id'> & { sha256: string | null }> = [...run.inputs, ...run.outputs];
    if (run.log_artifact_id !== null) links.push({ artifact_id: run.log_artifact_id, sha256: null });
    for (const link of links) artifacts.set(link.artifact_id, readLinked(store, run.run_id, link.artifact_id, link.sha256));
    for (const link of run.inputs) {
      const producer = producerOf(artifacts.get(link.artifact_id) as ArtifactRecord);
      if (producer !== null && !runs.has(producer)) pending.push({ id: producer, neededFor: link.artifact_id });
    }
  }
  return { runs, artifacts };
}

const startOf = (r: RunRecord): number => r.started_at ?? r.created_at;

/**
 * Producers before consumers; among runs free to go next, the earliest start, then the run id, so
 * the order is the same for the same store content. A cycle cannot come from a real store, but a
 * damaged one must not hang the export: its runs are appended in time order.
 */
function ancestryOrder(runs: Map<string, RunRecord>, artifacts: Map<string, ArtifactRecord>): RunRecord[] {
  const byTime = [...runs.values()].sort((a, b) => startOf(a) - startOf(b) || (a.run_id < b.run_id ? -1 : 1));
  const deps = new Map(
    byTime.map((r) => [
      r.run_id,
      r.inputs
        .map((l) => producerOf(artifacts.get(l.artifact_id) as ArtifactRecord))
        .filter((p): p is string => p !== null && p !== r.run_id && runs.has(p)),
    ]),
  );
  const done = new Set<string>();
  const order: RunRecord[] = [];
  while (order.length < byTime.length) {
    const ready = byTime.find((r) => !done.has(r.run_id) && (deps.get(r.run_id) ?? []).every((d) => done.has(d)));
    const next = ready ?? (byTime.find((r) => !done.has(r.run_id)) as RunRecord);
    done.add(next.run_id);
    order.push(next);
  }
  return order;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  fasta: 'fasta',
  fastq: 'fastq',
  vcf: 'vcf',
  json: 'json',
  csv: 'csv',
  tsv: 'tsv',
  text: 'txt',
  png: 'png',
};

/**
 * The artifact's path in the crate, `data/<artifact id>/<name>`: the label reduced to characters
 * that need no escaping in a URI path or a file system (so @id and path are the same string).
 */
function artifactPath(a: ArtifactRecord): string {
  const label = (a.label ?? '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 100);
  const base = label !== '' ? label : a.type.replace(/[^A-Za-z0-9_-]+/g, '_') || 'artifact';
  if (/\.[A-Za-z0-9]{1,8}$/.test(base)) return `data/${a.id}/${base}`;
  const ext = EXTENSIONS[a.type];
  return `data/${a.id}/${base}${ext === undefined ? '' : `.${ext}`}${a.compression === 'gzip' ? '.gz' : ''}`;
}

/** A canonical text kept under its hash (params or policy), as a crate document; the checked read verifies a sha256 hash. */
function storedDocument(store: Store, db: 'params' | 'policies', hash: string): CrateDocument | undefined {
  const text = db === 'params' ? readParams(store, hash) : readPolicy(store, hash);
  if (text === undefined) return undefined;
  const hex = sha256Hex(text);
  return { path: `${db}/${hex}.json`, text, sha256: hex };
}

/** What the graph is built from, gathered once. */
interface ChainFacts {
  readonly target: RunRecord;
  readonly runs: readonly RunRecord[];
  readonly artifacts: readonly ArtifactRecord[];
  readonly paths: ReadonlyMap<string, string>;
  /** params and policy documents by the hash the runs recorded. */
  readonly params: ReadonlyMap<string, CrateDocument>;
  readonly policies: ReadonlyMap<string, CrateDocument>;
  readonly license: RunCrateOptions['license'];
}

type Entity = Record<string, unknown> & { '@id': string };
const ref = (id: string): { '@id': string } => ({ '@id': id });
/** Compacted JSON-LD unpacks one-element arrays (RO-Crate 1.1 appendix); nothing at all when empty. */
function refs(ids: readonly string[]): unknown {
  const unique = [...new Set(ids)];
  return unique.length === 0 ? undefined : unique.length === 1 ? ref(unique[0] as string) : unique.map(ref);
}
const iso = (ms: number): string => new Date(ms).toISOString();
/** Fragment-safe text for local `#` identifiers. */
const fragment = (s: string): string => s.replace(/[^A-Za-z0-9._~:@+-]/g, (c) => encodeURIComponent(c));
const actionId = (r: RunRecord): string => `#${r.run_id}`;
const toolId = (r: RunRecord): string =>
  `#tool/${fragment(r.tool_id)}@${fragment(r.tool_version)}/${r.module_digest === null ? 'builtin' : fragment(r.module_digest)}`;
// Process Run Crate 0.5: Completed or Failed; runs not yet over get schema.org's other two statuses.
const ACTION_STATUS: Readonly<Record<RunStatus, string>> = {
  succeeded: 'CompletedActionStatus',
  failed: 'FailedActionStatus',
  blocked: 'FailedActionStatus',
  interrupted: 'FailedActionStatus',
  running: 'ActiveActionStatus',
  queued: 'PotentialActionStatus',
};
const statusRef = (status: RunStatus): unknown => ref(`http://schema.org/${ACTION_STATUS[status]}`);
const LANGUAGE_ID = '#helix-chain-language';

/** The chain description the main workflow entity is: steps in execution order with their links. */
function chainDocument(f: ChainFacts): CrateDocument {
  const byId = new Map(f.artifacts.map((a) => [a.id, a]));
  const link = (l: RunLink): Record<string, unknown> => ({
    role: l.role,
    artifact_id: l.artifact_id,
    sha256: l.sha256,
    path: f.paths.get(l.artifact_id),
    produced_by: producerOf(byId.get(l.artifact_id) as ArtifactRecord),
  });
  const doc = {
    format: 'helix-chain/1',
    description: `The Helix runs that led to ${f.target.run_id}, producers before consumers.`,
    target_run: f.target.run_id,
    steps: f.runs.map((r, position) => ({
      position,
      run_id: r.run_id,
      status: r.status,
      tool: { id: r.tool_id, version: r.tool_version, contract_version: r.contract_version, module_digest: r.module_digest },
      params_hash: r.params_hash,
      policy_hash: r.policy_hash,
      started_at: r.started_at === null ? null : iso(r.started_at),
      finished_at: r.finished_at === null ? null : iso(r.finished_at),
      inputs: r.inputs.map(link),
      outputs: r.outputs.map(link),
      log: r.log_artifact_id === null ? null : { artifact_id: r.log_artifact_id, path: f.paths.get(r.log_artifact_id) },
    })),
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  return { path: WORKFLOW_FILE, text, sha256: sha256Hex(text) };
}

function describeArtifact(a: ArtifactRecord): string {
  // Import paths are machine-local and may be private; the content hash is the provenance.
  const from =
    a.source.kind === 'run'
      ? `output "${a.source.role}" of ${a.source.run_id}`
      : a.source.kind === 'import'
        ? 'imported into Helix'
        : 'given inline in a call';
  return `Helix artifact ${a.id}: ${a.type}${a.compression === null ? '' : ` (${a.compression})`}, ${from}.`;
}

/** The RO-Crate metadata: descriptor, root, then every other entity sorted by @id. */
function crateGraph(f: ChainFacts, chain: CrateDocument): Record<string, unknown> {
  const entities = new Map<string, Entity>();
  const put = (e: Entity): void =>
    void entities.set(e['@id'], Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as Entity);
  const pathOf = (artifactId: string): string => f.paths.get(artifactId) as string;
  const logs = new Map(f.runs.flatMap((r) => (r.log_artifact_id === null ? [] : [[r.log_artifact_id, r] as const])));
  const document = (doc: CrateDocument, name: string, identifier: string | undefined, description: string): void =>
    put({
      '@id': doc.path,
      '@type': 'File',
      name,
      identifier,
      description,
      encodingFormat: 'application/json',
      contentSize: String(Buffer.byteLength(doc.text)),
      sha256: doc.sha256,
    });

  for (const a of f.artifacts) {
    const log = logs.get(a.id);
    // Workflow Run Crate 0.5: a trace file of an action points back at it via `about`.
    put({
      '@id': pathOf(a.id),
      '@type': 'File',
      name: a.label ?? a.id,
      identifier: a.id,
      description: describeArtifact(a),
      encodingFormat: a.media_type,
      contentSize: String(a.size),
      sha256: a.sha256,
      dateCreated: iso(a.created_at),
      about: log === undefined ? undefined : ref(actionId(log)),
    });
  }
  // Files, not PropertyValues: the exact RFC 8785 bytes whose hash is in the run id can be
  // re-hashed, one policy file serves every run under it, and Process Run Crate 0.5 puts
  // configuration a tool did not take as input (the policy) in the action's `object`.
  for (const [hash, doc] of f.params)
    document(
      doc,
      `Canonical params ${hash}`,
      hash,
      'RFC 8785 canonical params of a Helix run (exact tool, module digest, input with artifact ids replaced by content hashes); their hash is part of the run id.',
    );
  for (const [hash, doc] of f.policies)
    document(doc, `Policy ${hash}`, hash, 'The canonical Helix policy the run was checked against; its hash is part of the run id.');

  const times = [...f.runs.flatMap((r) => [r.created_at, r.started_at ?? 0, r.finished_at ?? 0]), ...f.artifacts.map((a) => a.created_at)];
  const published = iso(Math.max(...times));
  document(
    chain,
    `Provenance chain of ${f.target.run_id}`,
    undefined,
    "The runs Helix executed to produce this crate's results, in execution order, with their input and output artifacts.",
  );
  put({
    ...(entities.get(chain.path) as Entity),
    '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow', 'HowTo'],
    dateCreated: published,
    programmingLanguage: ref(LANGUAGE_ID),
    hasPart: refs([...new Set(f.runs.map(toolId))].sort()),
    step: refs(f.runs.map((r) => `#step/${r.run_id}`)),
  });
  put({
    '@id': LANGUAGE_ID,
    '@type': 'ComputerLanguage',
    name: 'Helix provenance chain',
    alternateName: 'helix-chain',
    version: '1',
    description: `JSON listing Helix runs in execution order (${WORKFLOW_FILE}); a record of what ran, not a script to run again.`,
  });

  f.runs.forEach((r, position) => {
    const id = actionId(r);
    put({
      '@id': toolId(r),
      '@type': 'SoftwareApplication',
      name: r.tool_id,
      softwareVersion: r.tool_version,
      identifier: r.module_digest ?? undefined,
      description: `Helix tool ${r.tool_id} ${r.tool_version} (contract ${r.contract_version}), ${r.module_digest === null ? 'without a WebAssembly module (a host built-in, or a container toolpack whose image its contract digest covers)' : `WebAssembly module ${r.module_digest}`}.`,
    });
    const properties = { params_hash: r.params_hash, policy_hash: r.policy_hash, contract_version: r.contract_version };
    for (const [name, value] of Object.entries(properties)) put({ '@id': `${id}/${name}`, '@type': 'PropertyValue', name, value });
    const failed = ACTION_STATUS[r.status] === 'FailedActionStatus';
    const error = r.result?.error;
    const metrics =
      r.metrics === null
        ? ''
        : `; ${r.metrics.duration_ms} ms, fuel used ${r.metrics.fuel_used}, peak memory ${r.metrics.memory_peak_pages} pages`;
    put({
      '@id': id,
      '@type': 'CreateAction',
      name: `Run of ${r.tool_id} ${r.tool_version}`,
      description: `Helix run ${r.run_id}: ${r.status} after ${r.attempts} attempt(s)${r.result === null ? '' : `, outcome ${r.result.status}`}${metrics}.`,
      identifier: r.run_id,
      startTime: r.started_at === null ? undefined : iso(r.started_at),
      endTime: r.finished_at === null ? undefined : iso(r.finished_at),
      actionStatus: statusRef(r.status),
      error: failed && error !== undefined ? `${error.code}: ${error.message}` : undefined,
      instrument: ref(toolId(r)),
      object: refs([
        ...r.inputs.map((l) => pathOf(l.artifact_id)),
        ...[f.params.get(r.params_hash)?.path, f.policies.get(r.policy_hash)?.path].filter((p): p is string => p !== undefined),
      ]),
      result: refs([...r.outputs.map((l) => pathOf(l.artifact_id)), ...(r.log_artifact_id === null ? [] : [pathOf(r.log_artifact_id)])]),
      additionalProperty: refs(Object.keys(properties).map((name) => `${id}/${name}`)),
    });
    // Provenance Run Crate 0.5: each run is a step of the chain, orchestrated by a ControlAction.
    put({
      '@id': `#step/${r.run_id}`,
      '@type': 'HowToStep',
      name: `Step ${position}: ${r.tool_id} ${r.tool_version}`,
      position: String(position),
      workExample: ref(toolId(r)),
    });
    put({
      '@id': `#control/${r.run_id}`,
      '@type': 'ControlAction',
      name: `Orchestrate step ${position}`,
      instrument: ref(`#step/${r.run_id}`),
      object: ref(id),
      actionStatus: statusRef(r.status),
    });
  });

  // Workflow Run Crate 0.5: the chain's own execution, with the main workflow as instrument.
  const byId = new Map(f.artifacts.map((a) => [a.id, a]));
  const chainInputs = f.runs.flatMap((r) => r.inputs).filter((l) => producerOf(byId.get(l.artifact_id) as ArtifactRecord) === null);
  const statuses = new Set(f.runs.map((r) => r.status));
  const overall: RunStatus =
    statuses.size === 1 && statuses.has('succeeded')
      ? 'succeeded'
      : statuses.has('running') || statuses.has('queued')
        ? 'running'
        : 'failed';
  const starts = f.runs.flatMap((r) => (r.started_at === null ? [] : [r.started_at]));
  const ends = f.runs.flatMap((r) => (r.finished_at === null ? [] : [r.finished_at]));
  const chainId = `#chain/${f.target.run_id}`;
  put({
    '@id': chainId,
    '@type': 'CreateAction',
    name: `Helix provenance chain ending in ${f.target.run_id}`,
    instrument: ref(chain.path),
    startTime: starts.length === 0 ? undefined : iso(Math.min(...starts)),
    endTime: ends.length === f.runs.length ? iso(Math.max(...ends)) : undefined,
    actionStatus: statusRef(overall),
    object: refs(chainInputs.map((l) => pathOf(l.artifact_id))),
    result: refs(f.target.outputs.map((l) => pathOf(l.artifact_id))),
  });

  for (const p of RUN_CRATE_PROFILES) put({ '@id': p.id, '@type': 'CreativeWork', name: p.name, version: p.version });
  const license = f.license ?? { id: '#license-unspecified', name: 'License not specified' };
  put({
    '@id': license.id,
    '@type': 'CreativeWork',
    name: license.name,
    description:
      f.license === undefined
        ? 'Helix recorded this provenance but does not know the terms of its data; ask the data owner before reuse.'
        : undefined,
  });

  const dataFiles = [...entities.values()]
    .filter((e) => e['@type'] === 'File' || e['@id'] === chain.path)
    .map((e) => e['@id'])
    .sort();
  const root: Entity = {
    '@id': './',
    '@type': 'Dataset',
    name: `Helix provenance of ${f.target.run_id} (${f.target.tool_id} ${f.target.tool_version})`,
    description: `Run ${f.target.run_id} of ${f.target.tool_id} ${f.target.tool_version} and the ${f.runs.length - 1} run(s) that produced its inputs, as recorded by Helix: each run is a CreateAction with its tool, inputs, outputs, log, canonical params and policy.`,
    datePublished: published,
    license: ref(license.id),
    conformsTo: refs(RUN_CRATE_PROFILES.map((p) => p.id)),
    mainEntity: ref(chain.path),
    hasPart: refs(dataFiles),
    // Process Run Crate 0.5: actions SHOULD be listed under the root's `mentions`.
    mentions: refs([chainId, ...f.runs.map(actionId)]),
  };
  const descriptor: Entity = {
    '@id': 'ro-crate-metadata.json',
    '@type': 'CreativeWork',
    conformsTo: refs([RO_CRATE_SPEC, WORKFLOW_RO_CRATE]),
    about: ref('./'),
  };
  const rest = [...entities.values()].sort((a, b) => (a['@id'] < b['@id'] ? -1 : a['@id'] > b['@id'] ? 1 : 0));
  return { '@context': [RO_CRATE_CONTEXT, WORKFLOW_RUN_CONTEXT], '@graph': [descriptor, root, ...rest] };
}

/** Builds the crate for runId and every run that produced its input artifacts, recursively (deduplicated, cycle-safe, deterministic order). */
export function buildRunCrate(store: Store, runId: string, options: RunCrateOptions = {}): RunCrate {
  const collected = collectChain(store, runId);
  const runs = ancestryOrder(collected.runs, collected.artifacts);
  const artifacts = [...collected.artifacts.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const paths = new Map(artifacts.map((a) => [a.id, artifactPath(a)]));
  const params = new Map<string, CrateDocument>();
  const policies = new Map<string, CrateDocument>();
  for (const run of runs) {
    const p = params.get(run.params_hash) ?? storedDocument(store, 'params', run.params_hash);
    if (p !== undefined) params.set(run.params_hash, p);
    const q = policies.get(run.policy_hash) ?? storedDocument(store, 'policies', run.policy_hash);
    if (q !== undefined) policies.set(run.policy_hash, q);
  }
  const facts: ChainFacts = {
    target: collected.runs.get(runId) as RunRecord,
    runs,
    artifacts,
    paths,
    params,
    policies,
    license: options.license,
  };
  const chain = chainDocument(facts);
  const documents = [chain, ...new Map([...params.values(), ...policies.values()].map((d) => [d.path, d])).values()].sort((a, b) =>
    a.path < b.path ? -1 : 1,
  );
  return {
    metadata: crateGraph(facts, chain),
    files: artifacts
      .map((a) => ({ path: paths.get(a.id) as string, artifactId: a.id, sha256: a.sha256, size: a.size }))
      .sort((a, b) => (a.path < b.path ? -1 : 1)),
    runs: runs.map((r) => r.run_id),
    documents,
  };
}

/** `rel` (a crate path with `/`) under `root`, refusing anything that would land outside it. */
function inside(root: string, rel: string): string {
  const full = path.resolve(root, ...rel.split('/'));
  if (!full.startsWith(root + path.sep))
    throw new HelixError('P-PRECOND-PATH', { message: `The crate path ${rel} leaves the crate directory.`, details: { path: rel } });
  return full;
}

/** Refuses a destination that exists and is not an empty directory, or whose parent is missing. */
async function checkDestination(dir: string): Promise<boolean> {
  const refuse = (why: string): never => {
    throw new HelixError('P-PRECOND-PATH', {
      message: `The crate cannot be written to ${dir}: ${why}.`,
      details: { path: dir },
      hint: 'Pass a new directory, or an empty one, inside an existing directory.',
    });
  };
  const info = await stat(dir).catch(() => undefined);
  if (info === undefined) {
    const parent = await stat(path.dirname(dir)).catch(() => undefined);
    if (parent?.isDirectory() !== true) refuse('its parent directory does not exist');
    return false;
  }
  if (!info.isDirectory()) refuse('it exists and is not a directory');
  if ((await readdir(dir)).length > 0) refuse('it is not empty');
  return true;
}

/** Streams an artifact's bytes into the crate, checking the size and the hash of what was written. */
async function writeArtifact(store: Store, root: string, file: RunCrate['files'][number]): Promise<void> {
  const target = inside(root, file.path);
  await mkdir(path.dirname(target), { recursive: true });
  const hash = createHash('sha256');
  let size = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const piece of readBlob(store, file.sha256)) {
      hash.update(piece);
      size += piece.length;
      yield piece;
    }
  }
  await pipeline(Readable.from(counted()), createWriteStream(target, { flags: 'wx' }));
  const actual = hash.digest('hex');
  if (size !== file.size || actual !== file.sha256) {
    throw new HelixError('D-DATA-CHECKSUM', {
      message: `Artifact ${file.artifactId} read back as ${size} bytes with sha256 ${actual}, not ${file.size} bytes with ${file.sha256}.`,
      details: { artifact_id: file.artifactId, sha256: file.sha256 },
    });
  }
}

/**
 * Writes ro-crate-metadata.json, the crate's documents (the chain description the main workflow
 * points at, canonical params and policies) and, with includeData, each artifact's bytes under
 * data/<artifact id>/<name>, verified while streaming, into destDir, which must not exist or be
 * empty. Everything goes to a sibling temporary directory renamed into place at the end, so a
 * failure (a damaged chunk, a full disk) leaves no partial crate behind.
 */
export async function exportRunCrate(
  store: Store,
  runId: string,
  destDir: string,
  opts: RunCrateOptions & { includeData?: boolean } = {},
): Promise<RunCrate & { dir: string }> {
  const crate = buildRunCrate(store, runId, opts);
  const dir = path.resolve(destDir);
  await checkDestination(dir);
  const staging = path.join(path.dirname(dir), `.${path.basename(dir)}.partial-${randomBytes(6).toString('hex')}`);
  await mkdir(staging);
  try {
    for (const doc of crate.documents) {
      await mkdir(path.dirname(inside(staging, doc.path)), { recursive: true });
      await writeFile(inside(staging, doc.path), doc.text, { flag: 'wx' });
    }
    if (opts.includeData === true) for (const file of crate.files) await writeArtifact(store, staging, file);
    await writeFile(path.join(staging, 'ro-crate-metadata.json'), `${JSON.stringify(crate.metadata, null, 2)}\n`, { flag: 'wx' });
    // Checked again: another process may have written to the destination meanwhile.
    if (await checkDestination(dir)) await rmdir(dir);
    await rename(staging, dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
      throw new HelixError('P-PRECOND-PATH', {
        message: `The crate cannot be written to ${dir}: it was filled while the crate was written.`,
        details: { path: dir },
        cause: err,
      });
    });
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  return { ...crate, dir };
}
