// Capability checks of the bytes the bulk import moves (ABI-BULK-004..006): exactly the artifact's
// bytes into the buffer and no further, whatever the host reads ahead, charged by the bytes, and
// journaled by their digest so verify catches a chunk damaged after the run.
import { randomBytes } from 'node:crypto';
import { expect, expectSuccess, type Check } from '../../check.js';
import { RAW_BUFFER_BASE, rawAnswers, rawInput, SCRIPT_LIMITS, type RawCall } from '../../kit/caps-kit.js';
import { MiB, raw, sha, stored } from './shared.js';

/** The checks of this file, in the report's order. */
export const bulkDataChecks: readonly Check[] = [
  {
    id: 'capabilities.bulk-read-write-args',
    title:
      'Bulk reads copy raw bytes up to the buffer and no further; lengths past the buffer and text-path arguments are refused; fuel counts bytes moved',
    category: 'capabilities',
    abi: ['ABI-BULK-004', 'ABI-CAP-006'],
    engines: ['helix'],
    expected:
      'a read of a 20-byte artifact into a 32-byte buffer pre-filled with 0xAA copies exactly the 20 bytes, answers {bytes:20, offset:0, next_offset:20, eof:true} and leaves bytes 20..31 as 0xAA; length 33 into 32 bytes is I-REQ-CAPABILITY-ARGS on /length; a bulk write with `data` is I-REQ-CAPABILITY-ARGS; a 6400-byte read is charged 1000 + ceil((request + answer + 6400)/64)',
    packs: () => [raw('cap.bulk', ['artifact.read', 'artifact.write'], { bulk: true, manifest: { declaredOutputs: [] } })],
    async run(ctx) {
      const host = await ctx.host();
      const small = new Uint8Array(randomBytes(20));
      small[3] = 0xff; // not UTF-8: bytes are raw
      const id = await stored(ctx, small);
      const bigBytes = new Uint8Array(randomBytes(10_000));
      const bigId = await stored(ctx, bigBytes);
      const readBig = { abi_version: 2, name: 'artifact.read', args: { artifact_id: bigId } };
      const r = await ctx.call(
        'cap.bulk',
        rawInput([
          {
            request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } },
            bulk: { ptr: RAW_BUFFER_BASE, len: 32, fill: 0xaa },
          },
          {
            request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, length: 33 } },
            bulk: { ptr: RAW_BUFFER_BASE, len: 32, fill: 0xbb },
          },
          {
            request: { abi_version: 2, name: 'artifact.write', args: { role: 'out', data: 'AAAA' } },
            bulk: { ptr: RAW_BUFFER_BASE, len: 4 },
          },
          { request: readBig, bulk: { ptr: RAW_BUFFER_BASE, len: 6400 } },
        ]),
      );
      const a = rawAnswers(r);
      expect(
        JSON.stringify(a[0]!.json.capability_result?.result) === JSON.stringify({ bytes: 20, offset: 0, next_offset: 20, eof: true }),
        `the read was answered ${a[0]!.text}`,
      );
      expect(Buffer.compare(a[0]!.dump.subarray(0, 20), Buffer.from(small)) === 0, 'the bytes copied are not the artifact');
      expect(
        a[0]!.dump.subarray(20).every((b) => b === 0xaa),
        `bytes past n were touched: ${a[0]!.dump.subarray(20).toString('hex')}`,
      );
      expect(
        a[1]!.json.error?.code === 'I-REQ-CAPABILITY-ARGS' && JSON.stringify(a[1]!.json.error.details).includes('/length'),
        `length 33 was answered ${a[1]!.text}`,
      );
      expect(
        a[1]!.dump.every((b) => b === 0xbb),
        'a refused read wrote into the buffer',
      );
      expect(a[2]!.json.error?.code === 'I-REQ-CAPABILITY-ARGS', `a bulk write with data was answered ${a[2]!.text}`);
      expect(Buffer.compare(a[3]!.dump, Buffer.from(bigBytes.subarray(0, 4096))) === 0, 'the 6400-byte read copied other bytes');
      const entry = host.runs
        .journal(r.run_id!)
        .find((e) => e.name === 'artifact.read' && (e.args as { artifact_id?: string }).artifact_id === bigId)!;
      const want = 1000 + Math.ceil((Buffer.byteLength(JSON.stringify(readBig)) + a[3]!.bytes.length + 6400) / 64);
      expect(entry.fuel === want, `the 6400-byte read was charged ${entry.fuel}, not ${want}`);
      ctx.observe('fuel_6400_read', entry.fuel);
    },
  },
  {
    id: 'capabilities.bulk-read-ahead',
    title: 'Whatever the host reads ahead, the guest receives exactly the artifact: in order, in odd pieces, and jumping around',
    category: 'capabilities',
    abi: ['ABI-BULK-005'],
    engines: ['helix'],
    expected:
      "bulk-copy.ts reading a 1.5 MiB random artifact in pieces of 1 MiB, 65537 bytes and 3 MiB + 5 sums to the artifact's byte sum and writes a copy with the artifact's sha256 each time; raw reads at offsets 0, 5n, n, 2n (out of order after a read-ahead) return exactly those slices",
    packs: () => [
      {
        id: 'cap.copy',
        module: '',
        guest: 'bulk-copy.ts',
        manifest: {
          limits: { ...SCRIPT_LIMITS, fuel: 5e10, maxCapabilityCalls: 10_000 },
          timeoutMs: 30_000,
          capabilities: { abiVersion: 2, allow: ['artifact.read', 'artifact.write'] },
          declaredOutputs: [{ role: 'copy', type: 'binary', label: 'a copy' }],
        },
      },
      raw('cap.bulk', ['artifact.read'], { bulk: true }),
    ],
    async run(ctx) {
      const bytes = new Uint8Array(randomBytes(MiB + MiB / 2 + 17));
      const id = await stored(ctx, bytes);
      const sum = bytes.reduce((s, b) => s + b, 0);
      const host = await ctx.host();
      for (const piece of [MiB, 65_537, 3 * MiB + 5]) {
        const out = expectSuccess(await ctx.call('cap.copy', { artifact_id: id, piece, copy: true })) as {
          bytes: number;
          sum: number;
          artifact_id: string;
        };
        expect(out.bytes === bytes.length && out.sum === sum, `piece ${piece}: ${JSON.stringify(out)}`);
        expect(host.artifacts.get(out.artifact_id).sha256 === sha(bytes), `piece ${piece}: the copy differs`);
      }
      const n = 4096;
      const at = (offset: number): RawCall => ({
        request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, offset } },
        bulk: { ptr: RAW_BUFFER_BASE, len: n },
      });
      const offsets = [0, 5 * n, n, 2 * n, MiB - 100];
      const a = rawAnswers(await ctx.call('cap.bulk', rawInput(offsets.map(at))));
      for (const [i, o] of offsets.entries()) {
        expect(Buffer.compare(a[i]!.dump, Buffer.from(bytes.subarray(o, o + n))) === 0, `the read at ${o} returned other bytes`);
      }
      ctx.observe('artifact_bytes', bytes.length);
    },
  },
  {
    id: 'capabilities.bulk-journal',
    title: 'Bulk calls are journaled by data_sha256 (the chunk key for a whole chunk); verify catches a chunk damaged after the run',
    category: 'capabilities',
    abi: ['ABI-BULK-006', 'ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'each bulk read of a 1 MiB-aligned piece is journaled with mode value, the control result as a value, result_sha256 null and data_sha256 the sha256 of the chunk; the writes name their bytes the same way; verifyRun matches; after one byte of the first stored chunk is flipped, verifyRun reports a departure at artifact.read',
    packs: () => [
      {
        id: 'cap.copy',
        module: '',
        guest: 'bulk-copy.ts',
        manifest: {
          limits: { ...SCRIPT_LIMITS, fuel: 5e10, maxCapabilityCalls: 10_000 },
          timeoutMs: 30_000,
          capabilities: { abiVersion: 2, allow: ['artifact.read', 'artifact.write'] },
          declaredOutputs: [{ role: 'copy', type: 'binary', label: 'a copy' }],
        },
      },
      {
        id: 'cap.read',
        module: '',
        guest: 'bulk-copy.ts',
        manifest: {
          limits: { ...SCRIPT_LIMITS, fuel: 5e10, maxCapabilityCalls: 10_000 },
          timeoutMs: 30_000,
          capabilities: { abiVersion: 2, allow: ['artifact.read'] },
        },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const bytes = new Uint8Array(randomBytes(2 * MiB + 3));
      const id = await stored(ctx, bytes);
      const r = await ctx.call('cap.copy', { artifact_id: id, piece: MiB, copy: true });
      expectSuccess(r);
      const journal = host.runs.journal(r.run_id!);
      const chunk = (i: number) => sha(bytes.subarray(i * MiB, (i + 1) * MiB));
      const reads = journal.filter((e) => e.name === 'artifact.read');
      expect(
        JSON.stringify(reads.map((e) => e.data_sha256)) === JSON.stringify([chunk(0), chunk(1), chunk(2)]),
        `reads name ${JSON.stringify(reads.map((e) => e.data_sha256))}`,
      );
      expect(
        reads.every((e) => e.mode === 'value' && e.result_sha256 === null && typeof (e.result as { bytes?: number }).bytes === 'number'),
        'a bulk read is not kept as a value',
      );
      const writes = journal.filter((e) => e.name === 'artifact.write' && (e.result as { bytes?: number } | null) !== null);
      expect(writes[0]?.data_sha256 === chunk(0), `the first write names ${writes[0]?.data_sha256}`);
      const report = await host.runs.verify(r.run_id!);
      expect(report.match === true, `verify of the untouched run: ${JSON.stringify(report).slice(0, 500)}`);
      // A run that only reads, so the departure can only come from its reads.
      const other = new Uint8Array(randomBytes(MiB + 100));
      const otherId = await stored(ctx, other);
      const readOnly = await ctx.call('cap.read', { artifact_id: otherId, piece: MiB });
      expectSuccess(readOnly);
      expect((await host.runs.verify(readOnly.run_id!)).match === true, 'verify of the untouched read-only run failed');
      const key = sha(other.subarray(0, MiB));
      const damaged = host.diagnostics.bytes('chunks', key)!;
      damaged[5] = damaged[5]! ^ 0xff;
      const planted = await host.diagnostics.plant('chunks', key, damaged);
      const after = await host.runs.verify(readOnly.run_id!);
      expect(
        after.match === false && /artifact\.read/.test(JSON.stringify(after.first_difference)),
        `a damaged chunk was not reported at artifact.read: ${JSON.stringify(after).slice(0, 500)}`,
      );
      ctx.observe('first_difference', after.first_difference);
      // Leave the store as it was for the canary.
      await host.diagnostics.restore([planted]);
    },
  },
];
