// kv.get / kv.put / kv.delete / kv.list: small JSON values in the store, namespaced per tool id
// (a tool never sees another tool's keys), with size ceilings on keys and values.
import { z } from 'zod';
import type { CapabilityDefinition } from './types.js';

/** Ceilings: keys are short names, values small documents (artifacts hold data). */
export const KV_MAX_KEY_BYTES = 256;
export const KV_MAX_VALUE_BYTES = 64 * 1024;
export const KV_MAX_LIST = 1000;

const Key = z
  .string()
  .min(1)
  .refine((k) => Buffer.byteLength(k) <= KV_MAX_KEY_BYTES, `key must be at most ${KV_MAX_KEY_BYTES} bytes`);
const Value = z
  .unknown()
  .refine(
    (v) => v !== undefined && JSON.stringify(v).length <= KV_MAX_VALUE_BYTES,
    `value must be JSON of at most ${KV_MAX_VALUE_BYTES} bytes`,
  );

const GetArgs = z.strictObject({ key: Key });
const GetResult = z.strictObject({ found: z.boolean(), value: z.unknown().optional() });
/** `kv.get`. */
export const kvGet: CapabilityDefinition<z.infer<typeof GetArgs>, z.infer<typeof GetResult>> = {
  name: 'kv.get',
  description: "Reads a value from the tool's key-value namespace.",
  privileged: false,
  journal: 'value',
  args: GetArgs,
  result: GetResult,
  invoke: (args, ctx) => ctx.kv.get(args.key),
};

const PutArgs = z.strictObject({ key: Key, value: Value });
const Ok = z.strictObject({ ok: z.literal(true) });
/** `kv.put`. */
export const kvPut: CapabilityDefinition<z.infer<typeof PutArgs>, z.infer<typeof Ok>> = {
  name: 'kv.put',
  description: "Stores a JSON value under a key in the tool's namespace.",
  privileged: false,
  journal: 'value',
  args: PutArgs,
  result: Ok,
  async invoke(args, ctx) {
    await ctx.kv.put(args.key, args.value);
    return { ok: true };
  },
};

const DeleteArgs = z.strictObject({ key: Key });
const DeleteResult = z.strictObject({ deleted: z.boolean() });
/** `kv.delete`. */
export const kvDelete: CapabilityDefinition<z.infer<typeof DeleteArgs>, z.infer<typeof DeleteResult>> = {
  name: 'kv.delete',
  description: "Removes a key from the tool's namespace.",
  privileged: false,
  journal: 'value',
  args: DeleteArgs,
  result: DeleteResult,
  invoke: async (args, ctx) => ({ deleted: await ctx.kv.delete(args.key) }),
};

const ListArgs = z.strictObject({ prefix: z.string().default(''), limit: z.number().int().min(1).max(KV_MAX_LIST).default(100) });
const ListResult = z.strictObject({ keys: z.array(z.string()) });
/** `kv.list`. */
export const kvList: CapabilityDefinition<z.infer<typeof ListArgs>, z.infer<typeof ListResult>> = {
  name: 'kv.list',
  description: "Lists keys of the tool's namespace in order, optionally under a prefix.",
  privileged: false,
  journal: 'value',
  args: ListArgs,
  result: ListResult,
  invoke: (args, ctx) => ({ keys: ctx.kv.list(args.prefix, args.limit) }),
};
