// secrets.get: a secret by name, only when the tool's allowlist names that very secret
// (`secrets.get.<name>`) and the policy grants it. The value is handed to the guest and
// nowhere else: journals keep a marker, logs and audit records only the name.
import { z } from 'zod';
import type { CapabilityDefinition } from './types.js';

const Args = z.strictObject({ name: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a lowercase secret name') });
const Result = z.strictObject({ value: z.string() });

/** `secrets.get`. */
export const secretsGet: CapabilityDefinition<z.infer<typeof Args>, z.infer<typeof Result>> = {
  name: 'secrets.get',
  description: 'Reads the secret `name`; the allowlist must hold secrets.get.<name>.',
  privileged: false,
  scopeOf: (args) => args.name,
  journal: 'redacted',
  args: Args,
  result: Result,
  invoke: (args, ctx) => ({ value: ctx.secrets.get(args.name) }),
};
