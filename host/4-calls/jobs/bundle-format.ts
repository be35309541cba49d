// The two directories fan-out moves between a submitting store and a node (abi/ABI.md, "Fan-out"):
// a job bundle (what to call, under which policy, with the input artifacts' bytes and records) and
// the result bundle `helix job run` writes into it (the run record, events, journal, audit, and the
// output, log, input and module bytes). Their JSON schemas, file names, and the job's files read
// checked against the hashes job.json names.
import path from 'node:path';
import { z } from 'zod';
import {
  ArtifactRecordSchema,
  HelixError,
  JournalEntrySchema,
  PolicySchema,
  ResponseEnvelopeSchema,
  RUN_ID_PATTERN,
  RunEventSchema,
  RunRecordSchema,
  SHA256_PATTERN,
} from '../../../abi/index.js';
import { bundleError, readBundleJson, readBundleText } from '../../1-base/files/bundle-files.js';
import { canonicalJson, sha256Digest } from '../../1-base/hashing.js';
import { ModuleRecordSchema } from '../../3-store/records.js';
import type { LoadedPolicy } from '../policy/load-policy.js';

/** The format name a job bundle's job.json carries. */
export const JOB_FORMAT = 'helix-job/1';
/** The format name a result bundle's result.json carries. */
export const RESULT_FORMAT = 'helix-job-result/1';

/** Files of a job bundle, relative to its directory. */
export const JOB_FILES = { job: 'job.json', params: 'params.json', policy: 'policy.json', blobs: 'blobs', result: 'result' } as const;
/** Files of a result bundle, relative to its directory (`<job bundle>/result`). */
export const RESULT_FILES = { result: 'result.json', blobs: 'blobs' } as const;

const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** job.json: the call to make on the node and the identity its run must have. */
export const JobSchema = z.strictObject({
  format: z.literal(JOB_FORMAT),
  /** The run id a local call of the same tool, params and policy gets (ABI-RUNID-001). */
  run_id: z.string().regex(RUN_ID_PATTERN),
  params_hash: Digest,
  policy_hash: Digest,
  request: z.strictObject({
    tool_id: z.string().min(1),
    /** The exact version the submitting host resolved. */
    tool_version: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    constraints: z.strictObject({ timeout_ms: z.number().int().min(1).optional(), memory_mb_limit: z.number().int().min(1).optional() }),
  }),
  /** Where the node loads the toolpacks from (an absolute path). */
  plugins_dir: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  /** The submitting store, which the node's store must never be. */
  submitted_from: z.strictObject({ home: z.string(), hostname: z.string() }),
  /** The input artifacts' records; each one's bytes are in blobs/<sha256>. */
  inputs: z.array(ArtifactRecordSchema),
});
export type Job = z.infer<typeof JobSchema>;

/** An audit record of the run as the node's store kept it. */
const AuditEntrySchema = z.strictObject({ at: z.number().int(), record: z.looseObject({ kind: z.string().min(1) }) });

/** result.json: what the node's run left, for collect to bring into the submitting store. */
export const ResultSchema = z.strictObject({
  format: z.literal(RESULT_FORMAT),
  run_id: z.string().regex(RUN_ID_PATTERN),
  node: z.strictObject({ hostname: z.string(), home: z.string() }),
  /** The node's response envelope. */
  response: ResponseEnvelopeSchema,
  /** The run as recorded on the node; null when the call never became a run. */
  run: RunRecordSchema.nullable(),
  events: z.array(RunEventSchema),
  journal: z.array(JournalEntrySchema),
  audit: z.array(AuditEntrySchema),
  /** The run's output and log artifacts; each one's bytes are in blobs/<sha256>. */
  artifacts: z.array(ArtifactRecordSchema),
  /** The module's record on the node; its bytes are in blobs/<hex of its digest>. */
  module: ModuleRecordSchema.nullable(),
  /** Every file under blobs/: the outputs', the log's, the guest input's and the module's bytes. */
  blobs: z.array(z.strictObject({ sha256: z.string().regex(SHA256_PATTERN), size: z.number().int().min(0) })),
});
export type Result = z.infer<typeof ResultSchema>;

/** The file holding the bytes of the blob `sha256` under a bundle directory. */
export function blobFile(dir: string, sha256: string): string {
  if (!SHA256_PATTERN.test(sha256)) throw bundleError(dir, `names the blob "${sha256}", which is no sha256`);
  return path.join(dir, JOB_FILES.blobs, sha256);
}

/** The job.json of the bundle in `dir`, checked against its schema (I-REQ-JOB-BUNDLE naming the file). */
export function readJob(dir: string): Job {
  return readBundleJson(path.join(dir, JOB_FILES.job), JobSchema);
}

/** The job's text file `name`, which must hash to `digest` (D-DATA-BUNDLE-HASH otherwise). */
export function readHashedText(dir: string, name: string, digest: string): string {
  const file = path.join(dir, name);
  const text = readBundleText(file);
  const actual = sha256Digest(text);
  if (actual !== digest)
    throw new HelixError('D-DATA-BUNDLE-HASH', {
      message: `The bundle file ${file} does not hash to ${digest}, which job.json names.`,
      details: { file, expected: digest, actual },
    });
  return text;
}

/**
 * The job's policy as loaded on the submitting host (its canonical text after expansion), after
 * policy.json and params.json are checked against the hashes job.json names.
 */
export function readJobPolicy(dir: string, job: Job): LoadedPolicy {
  const file = path.join(dir, JOB_FILES.policy);
  const parsed = PolicySchema.safeParse(JSON.parse(readHashedText(dir, JOB_FILES.policy, job.policy_hash)));
  if (!parsed.success)
    throw bundleError(
      file,
      'is not a policy',
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    );
  readHashedText(dir, JOB_FILES.params, job.params_hash);
  return { policy: parsed.data, source: file, hash: sha256Digest(canonicalJson(parsed.data)) };
}
