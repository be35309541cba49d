// clock.now_unix: the current time. Journaled like every result, so verifying a run replays
// the time the run saw.
import { z } from 'zod';
import type { CapabilityDefinition } from './types.js';

const Args = z.strictObject({});
const Result = z.strictObject({ unix_ms: z.number().int(), unix_s: z.number().int() });

/** `clock.now_unix`. */
export const clockNowUnix: CapabilityDefinition<z.infer<typeof Args>, z.infer<typeof Result>> = {
  name: 'clock.now_unix',
  description: 'The current time as Unix milliseconds and seconds.',
  privileged: false,
  journal: 'value',
  args: Args,
  result: Result,
  invoke(_args, ctx) {
    const ms = ctx.clock.nowUnixMs();
    return { unix_ms: ms, unix_s: Math.floor(ms / 1000) };
  },
};
