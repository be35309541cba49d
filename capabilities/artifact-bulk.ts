// artifact.read and artifact.write through `helix_v1.capability_call_bulk` (capability ABI 2):
// the same capabilities with their bytes outside the envelope, copied as they are into the
// guest's buffer or out of it (abi/ABI.md, "The bulk path", ABI-BULK-001 to -006).
import { z } from 'zod';
import { BULK_MAX_PIECE } from '../abi/index.js';
import { ArtifactId, OutputRole, WriteMeta, type WriteResult } from './artifact.js';
import type { CapabilityContext } from './types.js';

/** The arguments of a bulk `artifact.read`: no `encoding`, `length` at most the buffer's room. */
export const BulkReadArgs = z.strictObject({
  artifact_id: ArtifactId,
  offset: z.number().int().min(0).default(0),
  length: z
    .number()
    .int()
    .min(1)
    .max(BULK_MAX_PIECE)
    .optional()
    .describe('Bytes to read; defaults to the buffer length, and must not exceed it.'),
  decompress: z.boolean().default(false).describe('Read the gunzipped content of a gzip artifact; offsets count decompressed bytes.'),
});
export type BulkReadArgs = z.infer<typeof BulkReadArgs>;

/** What a bulk `artifact.read` answers in its envelope; the bytes themselves are in the buffer. */
export const BulkReadResult = z.strictObject({
  bytes: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int(),
  eof: z.boolean(),
});
export type BulkReadResult = z.infer<typeof BulkReadResult>;

/** The arguments of a bulk `artifact.write`: no `data`, no `encoding`; the piece is the buffer. */
export const BulkWriteArgs = z.strictObject({ role: OutputRole, ...WriteMeta });
export type BulkWriteArgs = z.infer<typeof BulkWriteArgs>;

/** A bulk capability's arguments checked against its schema and the buffer's room. */
export type BulkArgs =
  | { readonly ok: true; readonly args: BulkReadArgs | BulkWriteArgs }
  | { readonly ok: false; readonly violations: Array<{ path: string; message: string }> };

/** Checks `args` of bulk capability `name`; a read's `length` may not exceed the buffer (`capacity`). */
export function parseBulkArgs(name: 'artifact.read' | 'artifact.write', args: unknown, capacity: number): BulkArgs {
  const parsed = name === 'artifact.read' ? BulkReadArgs.safeParse(args) : BulkWriteArgs.safeParse(args);
  if (!parsed.success)
    return { ok: false, violations: parsed.error.issues.map((i) => ({ path: `/${i.path.join('/')}`, message: i.message })) };
  if (name === 'artifact.read') {
    const read = parsed.data as BulkReadArgs;
    if (read.length !== undefined && read.length > capacity)
      return { ok: false, violations: [{ path: '/length', message: `must be at most the buffer length (${capacity})` }] };
    if (read.length === undefined && capacity === 0)
      return { ok: false, violations: [{ path: '/length', message: 'the buffer is empty: pass a buffer of at least one byte' }] };
  }
  return { ok: true, args: parsed.data };
}

/** The bytes of one bulk read, with its control result. */
export interface BulkPiece {
  readonly result: BulkReadResult;
  readonly data: Uint8Array;
  /** The stored chunk's key when the bytes are exactly one whole chunk. */
  readonly chunk?: string;
}

/** Reads the piece a bulk `artifact.read` asks for, at most `capacity` bytes, through `read` (the port, or a read-ahead over it). */
export async function bulkRead(args: BulkReadArgs, capacity: number, read: CapabilityContext['artifacts']['read']): Promise<BulkPiece> {
  const length = args.length ?? capacity;
  const got = await read(args.artifact_id, { offset: args.offset, length, decompress: args.decompress });
  const n = got.data.length;
  return {
    result: { bytes: n, offset: args.offset, next_offset: args.offset + n, eof: got.eof },
    data: got.data,
    ...(got.chunk === undefined ? {} : { chunk: got.chunk }),
  };
}

/** Appends the guest's buffer to the output under `args.role`; answers as the text `artifact.write` does. */
export async function bulkWrite(args: BulkWriteArgs, data: Uint8Array, ctx: CapabilityContext): Promise<z.infer<typeof WriteResult>> {
  const meta = { ...(args.type === undefined ? {} : { type: args.type }), ...(args.label === undefined ? {} : { label: args.label }) };
  const r = await ctx.artifacts.write(args.role, data, args.final, meta);
  return {
    role: args.role,
    bytes: r.bytes,
    ...(r.artifact === undefined ? {} : { artifact_id: r.artifact.id, sha256: r.artifact.sha256, size: r.artifact.size }),
  };
}
