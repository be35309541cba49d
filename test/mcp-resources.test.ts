// Artifacts as MCP resources from the MCP server over a host with the bundled toolpacks (in this
// process, the SDK's client over its in-memory pair): every page of a store of more than one page,
// reads at the real bounds, and a tool's output artifact read back by its handle.
import { randomBytes } from 'node:crypto';
import type { CallToolResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_READ_BOUNDS, RESOURCE_PAGE_SIZE } from '../host/6-faces/mcp/resources.js';
import { serveInMemory, type MemoryServed } from './helpers/mcp-memory.js';
import { tempDir } from './helpers/toolpack.js';

const home = tempDir('helix-mcp-res-');
const ids: Record<string, string> = {};
const small: string[] = [];
const bigBinary = randomBytes(DEFAULT_READ_BOUNDS.blobMaxBytes - 1000);
let served: MemoryServed;

beforeAll(async () => {
  served = await serveInMemory({ home: home.dir });
  // Filled through the host: much faster than a hundred imports through a client.
  const artifacts = served.host.artifacts;
  for (let i = 0; i < RESOURCE_PAGE_SIZE + 5; i++) small.push((await artifacts.importInline(`note ${i}\n`, { label: `note ${i}` })).id);
  ids.fasta = (await artifacts.importInline('>r1 first\nACGTTT\n>r2\nGGGCCA\n', { label: 'reads' })).id;
  ids.bigText = (
    await artifacts.importInline(`${'ACGT'.repeat(20)}\n`.repeat(Math.ceil((DEFAULT_READ_BOUNDS.textMaxBytes * 1.5) / 81)), {
      label: 'big text',
    })
  ).id;
  ids.binary = (await artifacts.importInline(bigBinary, { label: 'binary' })).id;
  ids.tooBig = (await artifacts.importInline(randomBytes(DEFAULT_READ_BOUNDS.blobMaxBytes + 1), { label: 'too big' })).id;
}, 120_000);
afterAll(async () => {
  await served?.close();
  home.cleanup();
});

const uri = (id: string): string => `helix://artifact/${id}`;

describe('helix serve: artifact resources', () => {
  it('resources/list pages through every artifact in creation order', async () => {
    const all: Resource[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await served.client.listResources(cursor === undefined ? {} : { cursor });
      all.push(...page.resources);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(2);
    expect(all.map((r) => r.uri)).toEqual([...small, ids.fasta, ids.bigText, ids.binary, ids.tooBig].map((id) => uri(id!)));
    expect(all[0]).toMatchObject({ name: 'note 0', mimeType: 'text/plain', size: 7 });
  });

  it('resources/read returns text above 1 MiB as its preview with a note on how to get the bytes', async () => {
    const { contents } = await served.client.readResource({ uri: uri(ids.bigText!) });
    const c = contents[0] as { text: string; _meta: Record<string, unknown> };
    expect(c.text.length).toBeLessThan(10_000);
    expect(c.text).toMatch(/^ACGT/);
    expect(c.text).toContain(`above the ${DEFAULT_READ_BOUNDS.textMaxBytes}-byte bound`);
    expect(c._meta).toMatchObject({ 'helix/truncated': true });
  });

  it('resources/read returns binary up to 4 MiB as base64, and refuses a larger artifact', async () => {
    const { contents } = await served.client.readResource({ uri: uri(ids.binary!) });
    expect(contents[0]).toMatchObject({ mimeType: 'application/octet-stream' });
    expect(Buffer.from((contents[0] as { blob: string }).blob, 'base64').equals(bigBinary)).toBe(true);
    await expect(served.client.readResource({ uri: uri(ids.tooBig!) })).rejects.toThrow(
      /above the 4194304-byte bound.*helix artifact export/,
    );
  });

  it('an artifact a tool creates is readable by the handle in its output', async () => {
    const r = (await served.client.callTool({ name: 'seq-revcomp', arguments: { fasta: ids.fasta } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as { revcomp: string };
    const { contents } = await served.client.readResource({ uri: uri(out.revcomp) });
    expect(contents[0]).toMatchObject({ mimeType: 'text/x-fasta', text: '>r1 first revcomp\nAAACGT\n>r2 revcomp\nTGGCCC\n' });
  });
});
