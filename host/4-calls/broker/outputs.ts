// A run's output artifacts as the guest writes them (artifact.write): one streaming writer per
// declared role, with backpressure, sealed by a final piece, its bytes checked for the run's
// secrets on the way in. Nothing is visible until the run ends; the pipeline commits the sealed
// outputs in the run's finishing transaction.
import type { DeclaredOutputSchema } from '../../../abi/index.js';
import type { z } from 'zod';
import { prepareArtifact, type PreparedArtifact } from '../artifacts/index.js';
import { HelixError } from '../../../abi/index.js';
import { discardBlob } from '../../3-store/blobs.js';
import { newArtifactId } from '../../3-store/ids.js';
import type { Store } from '../../3-store/open-store.js';
import { GuardedStream, secretRefusal, type SecretGuard, type SecretHit } from './secret-guard.js';

type Declared = z.infer<typeof DeclaredOutputSchema>;

/** A sealed output, ready to commit with the run. */
export interface SealedOutput {
  readonly role: string;
  readonly id: string;
  readonly prepared: PreparedArtifact;
  readonly declared: Declared;
}

/** Pieces waiting for the chunk writer; `push` waits while too much is buffered. */
class PieceQueue implements AsyncIterable<Uint8Array> {
  readonly #pieces: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | undefined;
  #drained: (() => void) | undefined;
  #buffered = 0;
  static readonly HIGH_WATER = 8 * 1024 * 1024;

  async push(piece: Uint8Array): Promise<void> {
    this.#pieces.push(piece);
    this.#buffered += piece.length;
    this.#wake?.();
    while (this.#buffered > PieceQueue.HIGH_WATER) await new Promise<void>((resolve) => (this.#drained = resolve));
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const piece = this.#pieces.shift();
      if (piece !== undefined) {
        this.#buffered -= piece.length;
        if (this.#buffered <= PieceQueue.HIGH_WATER) this.#drained?.();
        yield piece;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

interface Writer {
  readonly queue: PieceQueue;
  readonly prepared: Promise<PreparedArtifact>;
  /** Present once the run has a secret guard: the pieces' check, with its held-back bytes. */
  stream?: GuardedStream;
  bytes: number;
  sealed?: SealedOutput;
  /** Set when a write was refused for carrying a secret: the role takes no more writes. */
  refused?: SecretHit;
}

/** The outputs of one run. */
export class RunOutputs {
  readonly #writers = new Map<string, Writer>();
  readonly #declared: Map<string, Declared>;
  #guard: SecretGuard | undefined;

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    declared: readonly Declared[],
    private readonly maxBytes: number,
  ) {
    this.#declared = new Map(declared.map((d) => [d.role, d]));
  }

  /** From now on, every piece, label and preview is checked for the secrets `guard` knows (ABI-SECRET-004). */
  guardWith(guard: SecretGuard): void {
    this.#guard = guard;
  }

  /** The declared output under `role`, if there is one. */
  declared(role: string): Declared | undefined {
    return this.#declared.get(role);
  }

  /** Appends `data` to `role`; with `final` seals it and returns its reserved id. */
  async write(
    role: string,
    data: Uint8Array,
    final: boolean,
    meta: { type?: string; label?: string },
  ): Promise<{ bytes: number; artifact?: { id: string; sha256: string; size: number } }> {
    const declared = this.#declared.get(role);
    if (declared === undefined) {
      throw new HelixError('C-CONTRACT-OUTPUT-ROLE', {
        message: `Role "${role}" is not a declared output.`,
        details: { role, declared: [...this.#declared.keys()] },
      });
    }
    let w = this.#writers.get(role);
    if (w?.sealed !== undefined)
      throw new HelixError('C-CONTRACT-OUTPUT-ROLE', { message: `Role "${role}" was already sealed with final.`, details: { role } });
    if (w?.refused !== undefined) throw secretRefusal(w.refused, 'artifact.write', 'artifacts', { role, refused_before: true });
    const guard = this.#guard;
    if (guard !== undefined && meta.label !== undefined)
      meta = { ...meta, label: guard.admitJson('artifacts', meta.label, 'artifact.write', '/label') };
    if (w === undefined) {
      const queue = new PieceQueue();
      const prepared = prepareArtifact(this.store, queue, {
        maxBytes: this.maxBytes,
        label: meta.label ?? declared.label ?? null,
        // The guest may state the type; otherwise it is detected from the content, and either
        // way it must be the declared one when the run ends.
        ...(meta.type === undefined ? {} : { type: meta.type }),
        source: { kind: 'run', run_id: this.runId, role },
        createdByRun: this.runId,
      });
      // Surface a failure at the next write or at final, not as an unhandled rejection.
      prepared.catch(() => undefined);
      w = { queue, prepared, bytes: 0 };
      this.#writers.set(role, w);
    }
    let pieces = [data];
    if (guard !== undefined) {
      w.stream ??= new GuardedStream(guard, guard.rules.artifacts);
      const checked = w.stream.next(data, final);
      if ('hit' in checked) throw this.#refuse(w, role, { ...checked.hit, path: '/data' });
      pieces = checked.pieces;
    }
    w.bytes += data.length;
    for (const piece of pieces) if (piece.length > 0) await w.queue.push(piece);
    if (!final) return { bytes: w.bytes };
    w.queue.end();
    let prepared = await w.prepared;
    // The preview holds decompressed text too: a gzip piece hides a secret from the byte check.
    const hit = guard?.findInJson(prepared.preview, '/preview');
    if (hit !== undefined) {
      if (guard!.rules.artifacts === 'refuse') throw this.#refuse(w, role, hit);
      prepared = { ...prepared, preview: guard!.redactJson(prepared.preview) };
    }
    w.sealed = { role, id: newArtifactId(), prepared, declared };
    return { bytes: w.bytes, artifact: { id: w.sealed.id, sha256: prepared.blob.sha256, size: prepared.blob.size } };
  }

  /** Refuses the role for the rest of the run: what it held back is dropped, nothing more is written. */
  #refuse(w: Writer, role: string, hit: SecretHit): HelixError {
    w.refused = hit;
    w.stream = undefined;
    w.queue.end();
    return secretRefusal(hit, 'artifact.write', 'artifacts', { role });
  }

  /** Ends every writer (so nothing waits forever) and returns the sealed outputs. */
  close(): SealedOutput[] {
    for (const w of this.#writers.values()) {
      if (w.sealed !== undefined) continue;
      w.queue.end();
      // Never sealed, so never committed: its chunks go to gc (ABI-STORE-050).
      void w.prepared.then((p) => this.store.transaction(() => discardBlob(this.store, p.blob))).catch(() => undefined);
    }
    return [...this.#writers.values()].flatMap((w) => (w.sealed === undefined ? [] : [w.sealed]));
  }

  /** Differences from the declared outputs (exactly the declared roles and types, ABI-CAP-008). */
  check(sealed: readonly SealedOutput[]): string[] {
    const problems: string[] = [];
    const byRole = new Map(sealed.map((s) => [s.role, s]));
    for (const d of this.#declared.values()) {
      const s = byRole.get(d.role);
      const refused = this.#writers.get(d.role)?.refused;
      if (refused !== undefined) problems.push(`role ${d.role} was refused: it carried the value of secret ${refused.secret}`);
      else if (s === undefined)
        problems.push(
          this.#writers.has(d.role) ? `role ${d.role} was written but never sealed with final` : `role ${d.role} was not created`,
        );
      else if (s.prepared.type !== d.type) problems.push(`role ${d.role} has type ${s.prepared.type}, declared ${d.type}`);
    }
    return problems;
  }
}
