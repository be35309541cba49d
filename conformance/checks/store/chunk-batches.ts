// Store check of how an import commits: its chunks 8 MiB to a commit, and a stalling source's first
// chunk stored and held by a pending write at once (ABI-STORE-036, ABI-STORE-050).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { newestCommitIn } from '../../../host/5-host/store-upkeep.js';
import { expect, type Check } from '../../check.js';
import { bigFile, firstLine, helix, storeCheck, storeFile } from '../../kit/store-kit.js';
import { cliPolicy, MIB, packs, policy } from './shared.js';

/** The checks of this file, in the report's order. */
export const chunkBatchChecks: readonly Check[] = [
  // ---------------------------------------------------------------- chunk batches (ABI-STORE-036)
  {
    id: 'store.chunk-batches',
    title: 'An import commits its chunks 8 MiB to a commit, and a stalling source has its first chunk stored and held within 20 ms',
    category: 'store',
    abi: ['ABI-STORE-036', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      'a 32 MiB import through the CLI costs well under one commit per 1 MiB chunk (under 16 of 32; 4 batches and the record on a fast disk); a writer whose source yields 1 MiB then stalls has, 100 ms later, that chunk and a pending write naming this process visible to another process (store check)',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'batches');
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      const before = newestCommitIn(storeFile(home));
      const data = bigFile(path.join(ctx.env.importRoot, 'b32.bin'), 32, 5);
      const imported = await helix(['artifact', 'import', data, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(imported.code === 0, `the import failed: ${firstLine(imported.stderr)}`);
      const commits = newestCommitIn(storeFile(home)) - before;
      ctx.observe('commits of a 32 MiB import', commits);
      // 8 MiB to a commit is 4 and the record; a batch the disk fills slower than 20 ms commits early.
      expect(commits < 16, `a 32 MiB import took ${commits} commits: not batched (one per 1 MiB chunk would be 32)`);

      const host = await ctx.host();
      let release: () => void = () => undefined;
      const stalled = new Promise<void>((r) => (release = r));
      async function* source(): AsyncGenerator<Uint8Array> {
        yield randomBytes(MIB);
        yield randomBytes(1000);
        await stalled;
        yield randomBytes(10);
      }
      const chunksBefore = (await storeCheck(host.home)).report.checked.chunks ?? 0;
      const writing = host.diagnostics.writeChunks(source());
      ctx.defer(() => release());
      await new Promise((r) => setTimeout(r, 100));
      const { report } = await storeCheck(host.home);
      ctx.observe('100 ms into a stalled write', {
        chunks: report.checked.chunks,
        chunks_before: chunksBefore,
        pending_writes: report.checked.pending_writes,
      });
      expect(
        (report.checked.chunks ?? 0) >= chunksBefore + 1 && (report.checked.pending_writes ?? 0) >= 2,
        `100 ms after the source stalled, another process sees ${report.checked.chunks} chunks (before ${chunksBefore}) and ${report.checked.pending_writes} pending-write entries`,
      );
      release();
      const blob = await writing;
      await host.diagnostics.discardChunks(blob);
    },
  },
];
