// Artifacts as MCP resources, `helix://artifact/<id>`: listed in creation order with cursors,
// read within size bounds (text whole or as its stored preview, binary whole or refused).
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import {
  ErrorCode,
  McpError,
  type ListResourcesResult,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { ARTIFACT_ID_PATTERN, type ArtifactRecord, HelixError } from '../../../abi/index.js';
import type { HostArtifacts } from '../../5-host/host-records.js';

/** The URI scheme and path of an artifact resource; the artifact id follows. */
export const ARTIFACT_URI_PREFIX = 'helix://artifact/';
/** Resources per `resources/list` page. */
export const RESOURCE_PAGE_SIZE = 100;
/** MCP's code for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

/** How much a read returns. */
export interface ReadBounds {
  /** Text content up to this many bytes is returned whole; larger text returns its preview. */
  readonly textMaxBytes: number;
  /** Binary content up to this many bytes is returned as base64; larger is refused. */
  readonly blobMaxBytes: number;
}

/** Defaults: 1 MiB of text (about what an agent can use), 4 MiB of binary (a figure or a small file). */
export const DEFAULT_READ_BOUNDS: ReadBounds = { textMaxBytes: 1 << 20, blobMaxBytes: 4 << 20 };

/** The resource template clients can offer for an artifact id. */
export const ARTIFACT_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${ARTIFACT_URI_PREFIX}{id}`,
  name: 'artifact',
  title: 'Helix artifact',
  description: 'An artifact in the Helix store by id (art_...): the ids that tool inputs and outputs carry.',
};

const TEXT_TYPES = new Set(['application/json', 'application/x-ndjson']);
const isText = (mediaType: string): boolean => mediaType.startsWith('text/') || TEXT_TYPES.has(mediaType);

/** The artifact as a listed resource. `size` only when the stored bytes are what a read returns. */
export function artifactResource(a: ArtifactRecord): Resource {
  const stored = a.compression === null ? `${a.size} bytes` : `${a.compression}-compressed, ${a.size} bytes stored`;
  const origin = a.created_by_run === null ? 'imported' : `created by ${a.created_by_run}`;
  return {
    uri: `${ARTIFACT_URI_PREFIX}${a.id}`,
    name: a.label ?? a.id,
    title: a.label ?? `${a.type} artifact ${a.id}`,
    description: `${a.id}: ${a.type}, ${stored}, sha256 ${a.sha256}, ${origin}.`,
    mimeType: a.media_type,
    ...(a.compression === null ? { size: a.size } : {}),
    annotations: { lastModified: new Date(a.created_at).toISOString() },
  };
}

/** One page of artifacts, oldest first; the cursor is the last id of the previous page. */
export function listArtifactResources(
  artifacts: HostArtifacts,
  cursor: string | undefined,
  pageSize = RESOURCE_PAGE_SIZE,
): ListResourcesResult {
  if (cursor !== undefined && !ARTIFACT_ID_PATTERN.test(cursor)) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  let page: ArtifactRecord[];
  try {
    page = artifacts.list({ limit: pageSize + 1, ...(cursor === undefined ? {} : { afterId: cursor }) });
  } catch (err) {
    if (err instanceof HelixError && err.code === 'P-PRECOND-ARTIFACT-NOT-FOUND')
      throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
    throw storeError(err);
  }
  const more = page.length > pageSize;
  const shown = more ? page.slice(0, pageSize) : page;
  return { resources: shown.map(artifactResource), ...(more ? { nextCursor: shown.at(-1)!.id } : {}) };
}

/** The artifact a URI names, or the MCP error for a bad or unknown one. */
function artifactOf(artifacts: HostArtifacts, uri: string): ArtifactRecord {
  const id = uri.startsWith(ARTIFACT_URI_PREFIX) ? uri.slice(ARTIFACT_URI_PREFIX.length) : '';
  if (!ARTIFACT_ID_PATTERN.test(id))
    throw new McpError(ErrorCode.InvalidParams, `Not a Helix artifact URI: ${uri} (expected ${ARTIFACT_URI_PREFIX}art_...)`, { uri });
  try {
    return artifacts.get(id);
  } catch (err) {
    if (err instanceof HelixError && err.code === 'P-PRECOND-ARTIFACT-NOT-FOUND')
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    throw storeError(err);
  }
}

/** A store failure (a damaged record or chunk, D-DATA-*) as an MCP error with its code and message, not a stack. */
function storeError(err: unknown): unknown {
  return err instanceof HelixError ? new McpError(ErrorCode.InternalError, `${err.code}: ${err.message}`, err.toWire()) : err;
}

/** The gunzipped bytes of a blob, as a stream; a damaged blob ends it with the blob's error. */
function gunzipped(artifacts: HostArtifacts, id: string): AsyncIterable<Buffer> {
  const source = Readable.from(artifacts.stream(id));
  const gunzip = createGunzip();
  source.on('error', (err) => gunzip.destroy(err));
  // Leaving the loop early destroys the gunzip stream; the source then has nowhere to write.
  gunzip.on('close', () => source.destroy());
  return source.pipe(gunzip);
}

/**
 * The artifact's content (gunzipped when stored compressed), at most `max` bytes; `complete`
 * says whether that was all of it. Reading stops at the bound, so a large or highly compressed
 * artifact costs no more than the bound.
 */
async function readContent(artifacts: HostArtifacts, a: ArtifactRecord, max: number): Promise<{ bytes: Buffer; complete: boolean }> {
  if (a.compression === null && a.size > max) return { bytes: Buffer.alloc(0), complete: false };
  const parts: Buffer[] = [];
  let total = 0;
  for await (const piece of a.compression === null ? artifacts.stream(a.id) : gunzipped(artifacts, a.id)) {
    parts.push(piece);
    total += piece.length;
    if (total > max) return { bytes: Buffer.alloc(0), complete: false };
  }
  return { bytes: Buffer.concat(parts), complete: true };
}

/** Reads an artifact resource within `bounds`. */
export async function readArtifactResource(
  artifacts: HostArtifacts,
  uri: string,
  bounds: ReadBounds = DEFAULT_READ_BOUNDS,
): Promise<ReadResourceResult> {
  const a = artifactOf(artifacts, uri);
  const howToGetBytes = `the artifact_preview tool shows its start; \`helix artifact export ${a.id} PATH\` writes its bytes`;
  try {
    if (isText(a.media_type)) {
      const { bytes, complete } = await readContent(artifacts, a, bounds.textMaxBytes);
      if (complete) return { contents: [{ uri, mimeType: a.media_type, text: bytes.toString('utf8') }] };
      const note = `[helix: preview only. ${a.id} is ${a.size} bytes${a.compression === null ? '' : ` stored (${a.compression})`}, above the ${bounds.textMaxBytes}-byte bound for reading as a resource; ${howToGetBytes}.]`;
      const preview = a.preview.text ?? '';
      const text = `${preview}${preview === '' || preview.endsWith('\n') ? '' : '\n'}${note}\n`;
      return { contents: [{ uri, mimeType: a.media_type, text, _meta: { 'helix/truncated': true, 'helix/size': a.size } }] };
    }
    const { bytes, complete } = await readContent(artifacts, a, bounds.blobMaxBytes);
    if (!complete) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${a.id} is binary (${a.media_type}, ${a.size} bytes stored), above the ${bounds.blobMaxBytes}-byte bound for reading as a resource; ${howToGetBytes}.`,
        { uri, size: a.size, max_bytes: bounds.blobMaxBytes },
      );
    }
    return { contents: [{ uri, mimeType: a.media_type, blob: bytes.toString('base64') }] };
  } catch (err) {
    // Damaged bytes (D-DATA-CHECKSUM) and the like: the code and message, not a stack.
    if (err instanceof HelixError) throw storeError(err);
    if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('Z_')) {
      throw new McpError(ErrorCode.InternalError, `${a.id} is stored as ${a.compression} but does not decompress: ${err.message}`, { uri });
    }
    throw err;
  }
}
