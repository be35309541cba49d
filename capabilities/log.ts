// log.emit: a structured line into the run's log artifact and the audit trail. Lines are
// bounded in size so a guest cannot flood the store.
import { z } from 'zod';
import type { CapabilityDefinition } from './types.js';

/** Largest serialized fields object of one line. */
export const MAX_LOG_FIELDS_BYTES = 8 * 1024;

const Args = z.strictObject({
  level: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  event: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1-100 characters of letters, digits, _ . : -'),
  fields: z
    .record(z.string(), z.unknown())
    .default({})
    .refine((f) => JSON.stringify(f).length <= MAX_LOG_FIELDS_BYTES, `fields must serialize to at most ${MAX_LOG_FIELDS_BYTES} bytes`),
});
const Result = z.strictObject({ ok: z.literal(true) });

/** `log.emit`. */
export const logEmit: CapabilityDefinition<z.infer<typeof Args>, z.infer<typeof Result>> = {
  name: 'log.emit',
  description: 'Writes a structured line (level, event, fields) to the run log and the audit trail.',
  privileged: false,
  journal: 'value',
  args: Args,
  result: Result,
  invoke(args, ctx) {
    ctx.log.emit(args.level, args.event, args.fields);
    return { ok: true };
  },
};
