// Artifact resources over a real store: paging with cursors, reads within bounds (text whole or
// as preview, gzip decompressed, binary whole or refused), and the MCP errors for bad URIs.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { openRecords, type StoreRecords } from '../../5-host/host-records.js';
import { loadPolicy } from '../../4-calls/policy/load-policy.js';
import { artifactResource, listArtifactResources, readArtifactResource } from './resources.js';

let t: { dir: string; cleanup: () => void };
let records: StoreRecords;
beforeEach(() => {
  t = tempDir('helix-mcp-resources-');
  records = openRecords({ home: path.join(t.dir, 'home'), policy: loadPolicy().policy });
});
afterEach(async () => {
  await records.close();
  t.cleanup();
});

const BOUNDS = { textMaxBytes: 64, blobMaxBytes: 128 };
const uri = (id: string): string => `helix://artifact/${id}`;
const failure = (p: Promise<unknown>): Promise<McpError> =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as McpError,
  );

describe('artifact resources', () => {
  it('listArtifactResources pages in creation order with a cursor until the last page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await records.artifacts.importInline(`text ${i}\n`, { label: `t${i}` })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = listArtifactResources(records.artifacts, cursor, 2);
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toEqual(ids.map(uri));
    expect(pages).toBe(3);
  });

  it('listArtifactResources refuses a cursor that is not an artifact of this store', async () => {
    expect(() => listArtifactResources(records.artifacts, 'page-2')).toThrow(/Invalid cursor/);
    expect(() => listArtifactResources(records.artifacts, 'art_00000000000000000000000000')).toThrow(/Invalid cursor/);
  });

  it('artifactResource names the artifact by label, gives its media type, and its size only when reads return the stored bytes', async () => {
    const plain = await records.artifacts.importInline('>r1\nACGT\n', { label: 'reads' });
    expect(artifactResource(plain)).toMatchObject({ uri: uri(plain.id), name: 'reads', mimeType: 'text/x-fasta', size: 9 });
    const packed = await records.artifacts.importInline(gzipSync('>r1\nACGT\n'));
    const r = artifactResource(packed);
    expect(r).toMatchObject({ name: packed.id, mimeType: 'text/x-fasta' });
    expect(r.size).toBeUndefined();
    expect(r.description).toMatch(/gzip-compressed, \d+ bytes stored/);
  });

  it('readArtifactResource returns text within the bound whole, and beyond it the stored preview with a note', async () => {
    const small = await records.artifacts.importInline('short text\n');
    expect((await readArtifactResource(records.artifacts, uri(small.id), BOUNDS)).contents).toEqual([
      { uri: uri(small.id), mimeType: 'text/plain', text: 'short text\n' },
    ]);
    const big = await records.artifacts.importInline('line of text\n'.repeat(50));
    const [content] = (await readArtifactResource(records.artifacts, uri(big.id), BOUNDS)).contents;
    expect((content as { text: string }).text).toMatch(
      /^line of text\n(line of text\n)+\[helix: preview only\. art_\w+ is 650 bytes, above the 64-byte bound .*artifact_preview.*helix artifact export art_\w+ PATH.*\]\n$/,
    );
    expect(content!._meta).toEqual({ 'helix/truncated': true, 'helix/size': 650 });
  });

  it('readArtifactResource decompresses a gzip-compressed text artifact, and stops at the bound', async () => {
    const packed = await records.artifacts.importInline(gzipSync('>r1\nACGT\n'));
    expect((await readArtifactResource(records.artifacts, uri(packed.id), BOUNDS)).contents[0]).toMatchObject({
      mimeType: 'text/x-fasta',
      text: '>r1\nACGT\n',
    });
    const bomb = await records.artifacts.importInline(gzipSync(`>r1\n${'A'.repeat(10_000_000)}\n`));
    expect(bomb.size).toBeLessThan(20_000);
    const [content] = (await readArtifactResource(records.artifacts, uri(bomb.id), BOUNDS)).contents;
    expect(content!._meta).toMatchObject({ 'helix/truncated': true });
    expect((content as { text: string }).text).toMatch(/^>r1\nA+\n?\[helix: preview only/);
  });

  it('readArtifactResource returns binary within the bound as base64 and refuses more with a way to get the bytes', async () => {
    const bytes = randomBytes(100);
    const small = await records.artifacts.importInline(bytes);
    expect((await readArtifactResource(records.artifacts, uri(small.id), BOUNDS)).contents).toEqual([
      { uri: uri(small.id), mimeType: 'application/octet-stream', blob: bytes.toString('base64') },
    ]);
    const big = await records.artifacts.importInline(randomBytes(200));
    const err = await failure(readArtifactResource(records.artifacts, uri(big.id), BOUNDS));
    expect(err).toBeInstanceOf(McpError);
    expect(err.code).toBe(-32600);
    expect(err.message).toMatch(/binary \(application\/octet-stream, 200 bytes stored\), above the 128-byte bound.*helix artifact export/);
  });

  it('readArtifactResource answers a malformed URI with invalid params and an unknown artifact with resource not found', async () => {
    expect((await failure(readArtifactResource(records.artifacts, 'file:///etc/passwd', BOUNDS))).code).toBe(-32602);
    expect((await failure(readArtifactResource(records.artifacts, 'helix://artifact/../x', BOUNDS))).code).toBe(-32602);
    expect((await failure(readArtifactResource(records.artifacts, uri('art_00000000000000000000000000'), BOUNDS))).code).toBe(-32002);
  });
});
