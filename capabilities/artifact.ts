// artifact.stat / artifact.read / artifact.write / artifact.list: data by artifact id, never
// by path. Reads are ranged (and gunzipped by the host when asked); writes stream in parts into
// an output under a declared role and become an artifact linked to the run when it ends.
import { z } from 'zod';
import type { ArtifactSummary, CapabilityDefinition } from './types.js';

/** Largest piece one read returns or one write sends (results travel through the broker). */
export const ARTIFACT_MAX_PIECE = 1024 * 1024;

/** An artifact id as capabilities take it. */
export const ArtifactId = z.string().regex(/^art_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an artifact id');
const Summary: z.ZodType<ArtifactSummary> = z.strictObject({
  id: z.string(),
  sha256: z.string(),
  size: z.number().int(),
  type: z.string(),
  compression: z.enum(['gzip']).nullable(),
  media_type: z.string(),
  label: z.string().nullable(),
  created_at: z.number().int(),
  created_by_run: z.string().nullable(),
});
const Encoding = z.enum(['utf8', 'base64']).default('utf8');

const StatArgs = z.strictObject({ artifact_id: ArtifactId });
/** `artifact.stat`. */
export const artifactStat: CapabilityDefinition<z.infer<typeof StatArgs>, ArtifactSummary> = {
  name: 'artifact.stat',
  description: 'Metadata of an artifact: size, type, compression, sha256.',
  privileged: false,
  journal: 'value',
  args: StatArgs,
  result: Summary,
  invoke: (args, ctx) => ctx.artifacts.stat(args.artifact_id),
};

const ReadArgs = z.strictObject({
  artifact_id: ArtifactId,
  offset: z.number().int().min(0).default(0),
  length: z.number().int().min(1).max(ARTIFACT_MAX_PIECE).default(ARTIFACT_MAX_PIECE),
  decompress: z.boolean().default(false).describe('Read the gunzipped content of a gzip artifact; offsets count decompressed bytes.'),
  encoding: Encoding,
});
const ReadResult = z.strictObject({
  data: z.string(),
  encoding: z.enum(['utf8', 'base64']),
  offset: z.number().int(),
  next_offset: z.number().int(),
  eof: z.boolean(),
});

/** Cuts `data` back to the last complete UTF-8 character, unless it is the end of the content. */
export function utf8Cut(data: Uint8Array, eof: boolean): number {
  if (eof) return data.length;
  let end = data.length;
  // Walk back over continuation bytes to the lead byte of the last character.
  let i = end - 1;
  while (i >= 0 && i >= end - 4 && (data[i]! & 0xc0) === 0x80) i--;
  if (i < 0) return end;
  const lead = data[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (end - i < need) end = i;
  return end;
}

/** `artifact.read`. */
export const artifactRead: CapabilityDefinition<z.infer<typeof ReadArgs>, z.infer<typeof ReadResult>> = {
  name: 'artifact.read',
  description:
    'Reads up to 1 MiB of an artifact from an offset; with decompress, of its gunzipped content. utf8 pieces end on a character boundary (next_offset says where to continue).',
  privileged: false,
  // Artifacts are immutable: a verify re-reads the bytes and checks them against the journaled hash.
  journal: 'digest',
  args: ReadArgs,
  result: ReadResult,
  async invoke(args, ctx) {
    const { data, eof } = await ctx.artifacts.read(args.artifact_id, {
      offset: args.offset,
      length: args.length,
      decompress: args.decompress,
    });
    if (args.encoding === 'base64') {
      return {
        data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'),
        encoding: 'base64',
        offset: args.offset,
        next_offset: args.offset + data.length,
        eof,
      };
    }
    const end = utf8Cut(data, eof);
    const text = new TextDecoder('utf-8', { fatal: false }).decode(data.subarray(0, end));
    return { data: text, encoding: 'utf8', offset: args.offset, next_offset: args.offset + end, eof: eof && end === data.length };
  },
};

/** An output role, as declared in the manifest. */
export const OutputRole = z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a declared output role');
/** The artifact.write arguments beside the piece, through either import. */
export const WriteMeta = {
  final: z.boolean().default(false),
  type: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/)
    .optional(),
  label: z.string().max(200).optional(),
};

const WriteArgs = z.strictObject({
  role: OutputRole,
  data: z.string().max(Math.ceil((ARTIFACT_MAX_PIECE * 4) / 3) + 4),
  encoding: Encoding,
  ...WriteMeta,
});
/** What `artifact.write` answers, through either import. */
export const WriteResult = z.strictObject({
  role: z.string(),
  bytes: z.number().int(),
  artifact_id: z.string().optional(),
  sha256: z.string().optional(),
  size: z.number().int().optional(),
});

/** `artifact.write`. */
export const artifactWrite: CapabilityDefinition<z.infer<typeof WriteArgs>, z.infer<typeof WriteResult>> = {
  name: 'artifact.write',
  description:
    "Appends a piece to the run's output under a declared role; with final, seals it and returns its artifact id (visible when the run ends).",
  privileged: false,
  journal: 'value',
  journalArgs: ({ data, ...rest }) => ({ ...rest, data_length: typeof data === 'string' ? data.length : null }),
  args: WriteArgs,
  result: WriteResult,
  async invoke(args, ctx) {
    const bytes = args.encoding === 'base64' ? Buffer.from(args.data, 'base64') : Buffer.from(args.data, 'utf8');
    const meta = { ...(args.type === undefined ? {} : { type: args.type }), ...(args.label === undefined ? {} : { label: args.label }) };
    const r = await ctx.artifacts.write(args.role, bytes, args.final, meta);
    return {
      role: args.role,
      bytes: r.bytes,
      ...(r.artifact === undefined ? {} : { artifact_id: r.artifact.id, sha256: r.artifact.sha256, size: r.artifact.size }),
    };
  },
};

const ListArgs = z.strictObject({ limit: z.number().int().min(1).max(1000).default(100), type: z.string().optional() });
const ListResult = z.strictObject({ artifacts: z.array(Summary) });
/** `artifact.list`. */
export const artifactList: CapabilityDefinition<z.infer<typeof ListArgs>, z.infer<typeof ListResult>> = {
  name: 'artifact.list',
  description: 'Artifacts in the store in creation order, optionally of one type.',
  privileged: false,
  journal: 'value',
  args: ListArgs,
  result: ListResult,
  invoke: (args, ctx) => ({
    artifacts: ctx.artifacts.list({ limit: args.limit, ...(args.type === undefined ? {} : { type: args.type }) }),
  }),
};
