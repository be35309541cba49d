// The output side of helix verify: a run's stored output artifacts re-read and hash-checked
// against their records, and the bytes a re-execution writes compared with them, so a damaged or
// substituted output is a mismatch, not a match.
import { createHash, type Hash } from 'node:crypto';
import type { RunRecord } from '../../../abi/index.js';
import type { BrokerAnswer, BulkPart } from '../../2-sandbox/engine/protocol.js';
import { isHelixError } from '../../../abi/index.js';
import { readArtifactRecord } from '../../3-store/artifact-records.js';
import { readBlob } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';
import { GuardedStream, type SecretGuard } from '../broker/secret-guard.js';

/** Where a check of the outputs found a difference. */
export interface OutputDifference {
  readonly where: string;
  readonly expected: unknown;
  readonly actual: unknown;
  readonly detail: string;
}

/** Re-reads one linked output: record, link hash, every chunk and the content hash (ABI-STORE-031). */
async function storedOutput(store: Store, link: RunRecord['outputs'][number]): Promise<OutputDifference | undefined> {
  const where = `output ${link.role} (${link.artifact_id})`;
  try {
    const record = readArtifactRecord(store, link.artifact_id);
    if (record === undefined) return { where, expected: link.sha256, actual: null, detail: 'the artifact is not in the store' };
    if (record.sha256 !== link.sha256)
      return { where, expected: link.sha256, actual: record.sha256, detail: 'the artifact record names other bytes than the run linked' };
    const hash = createHash('sha256');
    let size = 0;
    for await (const piece of readBlob(store, record.sha256)) {
      hash.update(piece);
      size += piece.length;
    }
    const actual = hash.digest('hex');
    if (size !== record.size || actual !== record.sha256)
      return {
        where,
        expected: record.sha256,
        actual,
        detail: `the stored bytes read back as ${size} bytes, the record says ${record.size}`,
      };
    return undefined;
  } catch (err) {
    // Damage found on the way (a chunk, a record) is the difference itself.
    if (isHelixError(err) && err.code.startsWith('D-DATA-')) return { where, expected: link.sha256, actual: err.code, detail: err.message };
    throw err;
  }
}

/** The first stored output of `run` that does not read back as recorded, if any. */
export async function checkStoredOutputs(store: Store, run: RunRecord): Promise<OutputDifference | undefined> {
  for (const link of run.outputs) {
    const difference = await storedOutput(store, link);
    if (difference !== undefined) return difference;
  }
  return undefined;
}

interface Written {
  readonly hash?: Hash;
  /** The piece filter the live broker applied to this role (ABI-SECRET-004). */
  readonly stream?: GuardedStream;
  sealed?: string;
}

/**
 * Follows what a re-execution writes through artifact.write (ABI-STORE-032): every piece the
 * replay answered with success is hashed per role, as the live broker stored it (a secret the run
 * received redacted by `guard`, ABI-SECRET-004), so the sealed bytes can be compared with the
 * run's stored outputs.
 */
export class WrittenOutputs {
  readonly #roles = new Map<string, Written>();

  constructor(private readonly guard: SecretGuard) {}

  /** Notes a capability request and the replay's answer to it; a bulk write's piece is its buffer's bytes. */
  note(request: Uint8Array, answer: BrokerAnswer, bulk?: BulkPart): void {
    if (answer.kind !== 'answer') return;
    const parse = (bytes: Uint8Array): Record<string, unknown> | undefined => {
      try {
        return JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    };
    const req = parse(request) as
      | { name?: unknown; args?: { role?: unknown; data?: unknown; encoding?: unknown; final?: unknown } }
      | undefined;
    if (req?.name === 'docker.run') {
      this.#noteContainer(parse(answer.response));
      return;
    }
    const data = bulk?.kind === 'write' ? bulk.data : typeof req?.args?.data === 'string' ? req.args.data : undefined;
    if (req?.name !== 'artifact.write' || typeof req.args?.role !== 'string' || data === undefined) return;
    if (parse(answer.response)?.status !== 'ok') return;
    const role = req.args.role;
    const w = this.#roles.get(role) ?? { hash: createHash('sha256'), stream: new GuardedStream(this.guard, this.guard.rules.artifacts) };
    this.#roles.set(role, w);
    if (w.sealed !== undefined || w.hash === undefined || w.stream === undefined) return;
    const final = req.args.final === true;
    const piece =
      typeof data !== 'string' ? data : req.args.encoding === 'base64' ? Buffer.from(data, 'base64') : Buffer.from(data, 'utf8');
    const passed = w.stream.next(piece, final);
    // A refused piece was refused live too, and the replay answers that refusal, never `ok`.
    if ('hit' in passed) return;
    for (const p of passed.pieces) w.hash.update(p);
    if (final) w.sealed = w.hash.digest('hex');
  }

  /**
   * A docker.run answered from the journal: the outputs and logs it registered are the ones its
   * recorded result names (ABI-DOCKER-009). A container cannot be re-run offline, so the check of
   * their bytes is the stored outputs' own (checkStoredOutputs); here the roles and hashes must agree.
   */
  #noteContainer(answer: Record<string, unknown> | undefined): void {
    if (answer?.status !== 'ok') return;
    const result = (answer.capability_result as { result?: Record<string, unknown> } | undefined)?.result;
    const outputs = Array.isArray(result?.outputs) ? (result.outputs as Array<{ role?: unknown; sha256?: unknown }>) : [];
    const logs = [result?.stdout_log, result?.stderr_log] as Array<{ role?: unknown; sha256?: unknown } | null | undefined>;
    for (const o of [...outputs, ...logs]) {
      if (typeof o?.role === 'string' && typeof o.sha256 === 'string' && !this.#roles.has(o.role))
        this.#roles.set(o.role, { sealed: o.sha256 });
    }
  }

  /** The first output the re-execution did not write exactly as stored, if any. */
  compare(run: RunRecord): OutputDifference | undefined {
    const stored = new Map(run.outputs.map((l) => [l.role, l.sha256]));
    for (const [role, sha256] of stored) {
      const sealed = this.#roles.get(role)?.sealed ?? null;
      if (sealed !== sha256)
        return {
          where: `output ${role}`,
          expected: sha256,
          actual: sealed,
          detail: sealed === null ? 'the re-execution did not write it' : 'the re-execution wrote other bytes',
        };
    }
    for (const [role, w] of this.#roles) {
      if (w.sealed !== undefined && !stored.has(role))
        return {
          where: `output ${role}`,
          expected: null,
          actual: w.sealed,
          detail: 'the re-execution wrote an output the run does not have',
        };
    }
    return undefined;
  }
}
