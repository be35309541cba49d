// Durable records of the store (README "Runs, artifacts and provenance"): artifacts and runs as zod
// schemas, parsed when read back from LMDB, so a record from an older or damaged store is caught,
// not trusted.
import { z } from 'zod';
import { CallMetricsSchema, WireErrorSchema } from './envelopes.js';

/** `art_` and 26 Crockford base32 characters (a ULID: time-sortable, random tail). */
export const ARTIFACT_ID_PATTERN = /^art_[0-9A-HJKMNP-TV-Z]{26}$/;
/** `run_` and 32 lowercase hex digits of the run identity hash. */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/;
/** A bare sha256 content hash, 64 lowercase hex digits. */
export const SHA256_PATTERN = /^[0-9a-f]{64}$/;

/** How an artifact came to be. */
export const ArtifactSourceSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('import'), path: z.string(), mtime_ms: z.number() }),
  z.strictObject({ kind: z.literal('inline') }),
  z.strictObject({ kind: z.literal('run'), run_id: z.string().regex(RUN_ID_PATTERN), role: z.string() }),
]);

/** A short look at an artifact's content, kept with its record. */
export const ArtifactPreviewSchema = z.strictObject({
  /** The first lines of text (decompressed), at most a few KiB. */
  text: z.string().nullable(),
  /** For FASTA/FASTQ: the first records' ids and lengths. */
  records: z.array(z.strictObject({ id: z.string(), length: z.number().int().min(0) })).optional(),
  truncated: z.boolean(),
});

/** An immutable artifact: bytes by content hash plus what Helix knows of them. */
export const ArtifactRecordSchema = z.strictObject({
  id: z.string().regex(ARTIFACT_ID_PATTERN),
  sha256: z.string().regex(SHA256_PATTERN),
  size: z.number().int().min(0),
  /** Detected or declared type: fasta, fastq, vcf, json, csv, tsv, text, png, binary, ... */
  type: z.string().min(1),
  /** Compression of the stored bytes, when the type is of the decompressed content. */
  compression: z.enum(['gzip']).nullable(),
  media_type: z.string().min(1),
  label: z.string().nullable(),
  /** Milliseconds since the epoch, strictly increasing across the store (snapshot boundaries). */
  created_at: z.number().int().min(0),
  created_by_run: z.string().regex(RUN_ID_PATTERN).nullable(),
  source: ArtifactSourceSchema,
  preview: ArtifactPreviewSchema,
});
export type ArtifactRecord = z.infer<typeof ArtifactRecordSchema>;

/** The run status machine (README "Runs, artifacts and provenance"). */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'blocked', 'interrupted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Allowed transitions; anything else is a bug and refused. A failed or interrupted run may run again. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ['running', 'blocked'],
  running: ['succeeded', 'failed', 'interrupted'],
  succeeded: [],
  failed: ['running', 'blocked'],
  blocked: ['running', 'blocked'],
  interrupted: ['running', 'blocked'],
};

/** An artifact linked to a run under a role. */
export const RunLinkSchema = z.strictObject({
  role: z.string().min(1),
  artifact_id: z.string().regex(ARTIFACT_ID_PATTERN),
  sha256: z.string().regex(SHA256_PATTERN),
});
export type RunLink = z.infer<typeof RunLinkSchema>;

/** What a replay returns: the outcome part of the response envelope. */
export const RunResultSchema = z.strictObject({
  status: z.enum(['success', 'retryable_error', 'terminal_error', 'invalid_request']),
  output: z.unknown().optional(),
  error: WireErrorSchema.optional(),
  warnings: z.array(z.string()),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** One run: a deterministic identity, its state, and its provenance. */
export const RunRecordSchema = z.strictObject({
  run_id: z.string().regex(RUN_ID_PATTERN),
  tool_id: z.string(),
  tool_version: z.string(),
  contract_version: z.string(),
  /** sha256: digest of the module, or null for a host built-in. */
  module_digest: z.string().nullable(),
  policy_hash: z.string(),
  params_hash: z.string(),
  status: z.enum(RUN_STATUSES),
  attempts: z.number().int().min(0),
  created_at: z.number().int(),
  started_at: z.number().int().nullable(),
  finished_at: z.number().int().nullable(),
  /** The process running it, so another process can tell a live run from a dead one. */
  owner: z.strictObject({ pid: z.number().int(), hostname: z.string(), started_at: z.number().int() }).nullable(),
  metrics: CallMetricsSchema.nullable(),
  result: RunResultSchema.nullable(),
  inputs: z.array(RunLinkSchema),
  outputs: z.array(RunLinkSchema),
  log_artifact_id: z.string().regex(ARTIFACT_ID_PATTERN).nullable(),
  idempotency_key: z.string().nullable(),
  last_call_id: z.string().nullable(),
  /** sha256 of the input JSON bytes the guest received (stored as a blob, for verify). */
  input_sha256: z.string().regex(SHA256_PATTERN).nullable().default(null),
  /** sha256 of the output envelope bytes the guest returned. */
  output_sha256: z.string().regex(SHA256_PATTERN).nullable().default(null),
  /** The capability journal: how many entries and the hash of the last (its chain head). */
  journal: z.strictObject({ entries: z.number().int().min(0), head: z.string().nullable() }).default({ entries: 0, head: null }),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

/** One capability call of a run and its answer, hash-chained to the previous entry. */
export const JournalEntrySchema = z.strictObject({
  seq: z.number().int().min(0),
  /** The capability name as requested (null when the request was not a valid envelope). */
  name: z.string().nullable(),
  /** The arguments as requested, secret values replaced by markers. */
  args: z.unknown(),
  /** sha256 of the exact request bytes: a re-execution must make the same request. */
  request_sha256: z.string().regex(SHA256_PATTERN),
  outcome: z.enum(['ok', 'error', 'abort']),
  /**
   * How the result is kept: `value` in full; `digest` only its hash (an immutable source such as
   * an artifact re-supplies it); `redacted` not at all (a secret).
   */
  mode: z.enum(['value', 'digest', 'redacted']),
  result: z.unknown(),
  result_sha256: z.string().regex(SHA256_PATTERN).nullable(),
  error: z
    .strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()), hint: z.string().optional() })
    .nullable(),
  /** sha256 of the answer bytes the guest received. */
  response_sha256: z.string().regex(SHA256_PATTERN),
  fuel: z.number().int().min(0),
  /**
   * Present (true) once the run had received a secret when the entry was made: request_sha256,
   * response_sha256 and result_sha256 are then HMAC-SHA256 under the store's secret hash key,
   * not plain sha256, so a guessed secret cannot be checked against them offline (ABI-SECRET-008).
   */
  keyed: z.literal(true).optional(),
  /**
   * A call through the bulk import (ABI-BULK-006): what identifies the bytes that moved outside
   * the envelope, copied into guest memory by a read or out of it by a write. The stored chunk's
   * key when the piece was exactly one chunk, else the sha256 of the bytes (keyed as the other
   * hashes are). Absent for envelope-only calls.
   */
  data_sha256: z.string().regex(SHA256_PATTERN).optional(),
  /** sha256 of the previous entry's hash and this entry's canonical content. */
  hash: z.string().regex(SHA256_PATTERN),
});
export type JournalEntry = z.infer<typeof JournalEntrySchema>;

/** One entry of a run's event log. */
export const RunEventSchema = z.strictObject({
  at: z.number().int(),
  kind: z.string().min(1),
  detail: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEventSchema>;
