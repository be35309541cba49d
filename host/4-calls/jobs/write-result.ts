// Writing a result bundle from the node's store (ABI-FANOUT-004): the run as recorded, its
// events, journal and audit records, and the bytes of its output and log artifacts, the input the
// guest saw and the module, each under blobs/<sha256>; result.json last, so a result bundle with
// a result.json is whole.
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { ArtifactRecord, ResponseEnvelope } from '../../../abi/index.js';
import { writeBundleJson } from '../../1-base/files/bundle-files.js';
import { readArtifactRecord } from '../../3-store/artifact-records.js';
import { readAudit } from '../../3-store/audit.js';
import { blobRecord } from '../../3-store/blobs.js';
import { readJournal } from '../../3-store/journal.js';
import { readModuleRecord } from '../../3-store/modules.js';
import type { Store } from '../../3-store/open-store.js';
import { getRun, runEvents } from '../runs/run-store.js';
import { writeBlobFile } from './bundle-blobs.js';
import { RESULT_FILES, RESULT_FORMAT, ResultSchema, type Result } from './bundle-format.js';

/**
 * Writes the result bundle of run `runId` into `dir` from the node's `store`, with the node's
 * `response`; without a store (the job was refused before one was opened) the response alone.
 */
export async function writeResultBundle(store: Store | undefined, dir: string, runId: string, response: ResponseEnvelope): Promise<Result> {
  mkdirSync(dir, { recursive: true });
  if (store === undefined)
    return writeResultFile(dir, {
      format: RESULT_FORMAT,
      run_id: runId,
      node: { hostname: hostname(), home: '' },
      response,
      run: null,
      events: [],
      journal: [],
      audit: [],
      artifacts: [],
      module: null,
      blobs: [],
    });
  const run = getRun(store, runId) ?? null;
  const artifacts: ArtifactRecord[] = [];
  const blobs = new Map<string, number>();
  const keep = async (sha256: string): Promise<void> => {
    const size = blobRecord(store, sha256)?.size;
    if (size === undefined || blobs.has(sha256)) return;
    await writeBlobFile(store, dir, sha256);
    blobs.set(sha256, size);
  };
  const ids =
    run === null ? [] : [...run.outputs.map((o) => o.artifact_id), ...(run.log_artifact_id === null ? [] : [run.log_artifact_id])];
  for (const id of ids) {
    const record = readArtifactRecord(store, id);
    if (record === undefined) continue;
    artifacts.push(record);
    await keep(record.sha256);
  }
  if (run?.input_sha256 != null) await keep(run.input_sha256);
  const module = run?.module_digest == null ? undefined : readModuleRecord(store, run.module_digest);
  if (module !== undefined) await keep(module.blob);
  return writeResultFile(dir, {
    format: RESULT_FORMAT,
    run_id: runId,
    node: { hostname: hostname(), home: store.home },
    response,
    run,
    events: run === null ? [] : runEvents(store, runId),
    journal: run === null ? [] : readJournal(store, runId),
    audit: readAudit(store)
      .filter((a) => a.run_id === runId)
      .map(({ at, ...record }) => ({ at, record })),
    artifacts,
    module: module ?? null,
    blobs: [...blobs].map(([sha256, size]) => ({ sha256, size })),
  });
}

/** Writes result.json (checked against its schema first) by a rename, so it is there whole or not at all. */
function writeResultFile(dir: string, value: Result): Result {
  const result = ResultSchema.parse(value);
  const file = path.join(dir, RESULT_FILES.result);
  writeBundleJson(file, result);
  return result;
}
