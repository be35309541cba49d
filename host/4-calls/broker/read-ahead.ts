// One piece of read-ahead for a run's bulk reads: after serving [o, o+n) of an artifact, the
// host reads [o+n, o+2n) while the guest computes, so the store's read and chunk check overlap
// the guest's work instead of adding to it (ABI-BULK-005). Bounded: one piece, dropped when the
// run ends or reads elsewhere. Pieces are read into two buffers in turn, not a new one each.
import type { ArtifactPort } from '../../../capabilities/index.js';

type Read = ArtifactPort['read'];
type Range = Omit<Parameters<Read>[1], 'into'>;
type Got = Awaited<ReturnType<Read>>;

/**
 * Sequential reads through `read`, each followed by a read of the next piece in the background.
 * A piece `get` returns is valid until the next `get`: each read fills the buffer the piece
 * before last was in (a fresh buffer of a few MiB per piece faults in every page it touches).
 */
export class ReadAhead {
  #next: { readonly key: string; readonly piece: Promise<Got | undefined> } | undefined;
  #live = true;
  readonly #buffers: [Uint8Array, Uint8Array] = [new Uint8Array(0), new Uint8Array(0)];
  #turn: 0 | 1 = 0;

  constructor(private readonly read: Read) {}

  /** The piece [offset, offset+length) of `id`: the one read ahead when it is that piece, else read now. */
  async get(id: string, range: Range): Promise<Got> {
    const next = this.#next;
    this.#next = undefined;
    // Never two reads of one artifact at once (a gzip artifact's cursor is sequential): a piece
    // read ahead for elsewhere is waited for, then dropped.
    const ahead = next === undefined ? undefined : await next.piece;
    const got = ahead !== undefined && next!.key === keyOf(id, range) ? ahead : await this.#read(id, range);
    if (!got.eof && got.data.length === range.length) this.#ahead(id, { ...range, offset: range.offset + got.data.length });
    return got;
  }

  /** Drops the piece read ahead, and any begun later: the run has ended. */
  drop(): void {
    this.#live = false;
    this.#next = undefined;
  }

  #ahead(id: string, range: Range): void {
    // After the answer is on its way: the lane posts it once the broker's promise settles, and
    // this runs on the next turn of the event loop, while the guest works on it.
    const piece = new Promise<Got | undefined>((resolve) => {
      setImmediate(() => {
        if (!this.#live) return resolve(undefined);
        // A failure is not kept: the read is made again when asked for, and fails then, in its place.
        this.#read(id, range).then(resolve, () => resolve(undefined));
      });
    });
    this.#next = { key: keyOf(id, range), piece };
  }

  /** Reads into the buffer whose turn it is (grown to the piece's length when needed). */
  #read(id: string, range: Range): Promise<Got> {
    const turn = this.#turn;
    this.#turn = turn === 0 ? 1 : 0;
    if (this.#buffers[turn].length < range.length) this.#buffers[turn] = new Uint8Array(range.length);
    return this.read(id, { ...range, into: this.#buffers[turn] });
  }
}

function keyOf(id: string, range: Range): string {
  return `${id}:${range.offset}:${range.length}:${range.decompress}`;
}
