// The bulk path's read-ahead over a real store: sequential pieces are read one ahead, the same
// bytes come back either way, and a read elsewhere or the end of the run drops the piece read
// ahead (ABI-BULK-005).
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { importInline } from '../artifacts/index.js';
import { openStore } from '../../3-store/open-store.js';
import { RunOutputs } from './outputs.js';
import { artifactPort } from './ports.js';
import { ReadAhead } from './read-ahead.js';

const home = tempDir('helix-read-ahead-');
const store = openStore(home.dir);
afterAll(async () => {
  await store.close();
  home.cleanup();
});

const MiB = 1 << 20;

/** The real artifact port, with every read it makes noted. */
function countedPort(): { read: ReturnType<typeof artifactPort>['read']; offsets: number[] } {
  const port = artifactPort(store, new RunOutputs(store, 'run_read_ahead', [], 0));
  const offsets: number[] = [];
  return {
    offsets,
    read: (id, range) => {
      offsets.push(range.offset);
      return port.read(id, range);
    },
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ReadAhead', () => {
  it('reads the next piece while the caller works, and hands it over when asked for', async () => {
    const bytes = new Uint8Array(randomBytes(3 * MiB + 5));
    const { id } = await importInline(store, bytes, { type: 'binary' });
    const port = countedPort();
    const ahead = new ReadAhead(port.read);
    const got: Uint8Array[] = [];
    for (let offset = 0; ; offset += MiB) {
      const piece = await ahead.get(id, { offset, length: MiB, decompress: false });
      got.push(piece.data.slice()); // valid until the next get
      await turn(); // the guest's work: the next piece is read meanwhile
      if (piece.eof) break;
    }
    expect(Buffer.concat(got).equals(Buffer.from(bytes))).toBe(true);
    // Each piece read once: the three read ahead were the ones asked for next.
    expect(port.offsets).toEqual([0, MiB, 2 * MiB, 3 * MiB]);
  });

  it('drops the piece read ahead when the caller reads elsewhere, and returns the right bytes', async () => {
    const bytes = new Uint8Array(randomBytes(2 * MiB));
    const { id } = await importInline(store, bytes, { type: 'binary' });
    const port = countedPort();
    const ahead = new ReadAhead(port.read);
    await ahead.get(id, { offset: 0, length: 1000, decompress: false });
    await turn();
    const elsewhere = await ahead.get(id, { offset: 5000, length: 1000, decompress: false });
    expect(Buffer.from(elsewhere.data).equals(Buffer.from(bytes.subarray(5000, 6000)))).toBe(true);
    expect(port.offsets).toEqual([0, 1000, 5000]);
  });

  it('reads every piece into one of two buffers in turn, never a new one per piece, and each piece holds its own bytes when handed over', async () => {
    const bytes = new Uint8Array(randomBytes(6 * MiB));
    const { id } = await importInline(store, bytes, { type: 'binary' });
    const ahead = new ReadAhead(artifactPort(store, new RunOutputs(store, 'run_read_ahead', [], 0)).read);
    const buffers = new Set<ArrayBufferLike>();
    for (let offset = 0; offset < bytes.length; offset += MiB) {
      const piece = await ahead.get(id, { offset, length: MiB, decompress: false });
      expect(Buffer.from(piece.data).equals(Buffer.from(bytes.subarray(offset, offset + MiB)))).toBe(true);
      buffers.add(piece.data.buffer);
      await turn();
    }
    expect(buffers.size).toBe(2);
  });

  it('reads nothing more once dropped at the end of the run', async () => {
    const bytes = new Uint8Array(randomBytes(2 * MiB));
    const { id } = await importInline(store, bytes, { type: 'binary' });
    const port = countedPort();
    const ahead = new ReadAhead(port.read);
    await ahead.get(id, { offset: 0, length: MiB, decompress: false });
    ahead.drop();
    await turn();
    await turn();
    expect(port.offsets).toEqual([0]);
  });
});
