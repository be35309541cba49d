// Wire envelopes: the request and response of a call (abi/schemas/request-envelope.json and
// response-envelope.json), the guest's output envelopes, and the capability call/result envelopes
// (abi/ABI.md, "A call", "Capability calls" and "Responses").
import { z } from 'zod';
import { CAPABILITY_ABI_VERSIONS } from './constants.js';
import { ERROR_CODE_PATTERN } from './errors.js';

const JsonObject = z.record(z.string(), z.unknown());

/** Who is calling and in what environment; defaults fill what MCP and the CLI do not carry. */
export const CallContextSchema = z.strictObject({
  actor_id: z.string().min(1).default('local://cli'),
  scopes: z.array(z.string()).default([]),
  trace_id: z.string().min(1).optional(),
  parent_span_id: z.string().min(1).optional(),
  locale: z.string().optional(),
  timezone: z.string().default('UTC'),
  clock: z.enum(['monotonic', 'wall']).default('wall'),
  env: z.enum(['prod', 'staging', 'dev']).default('dev'),
});

/** Limits the caller asks for; the smallest of these, the manifest and the policy wins. */
export const CallConstraintsSchema = z.strictObject({
  timeout_ms: z.number().int().min(1).max(600_000).optional(),
  deadline_unix_ms: z.number().int().min(0).optional(),
  idempotency_key: z.string().min(16).max(512).optional(),
  memory_mb_limit: z.number().int().min(1).optional(),
  net_allowlist: z.array(z.string()).optional(),
  retry_policy: z
    .strictObject({
      max_attempts: z.number().int().min(1),
      base_ms: z.number().int().min(0),
      cap_ms: z.number().int().min(0),
      jitter: z.enum(['none', 'full']),
    })
    .optional(),
});

/** A call request. Only `tool_id` and `input` are required. */
export const RequestEnvelopeSchema = z.strictObject({
  call_id: z.string().min(1).max(200).optional(),
  tool_id: z.string().min(1).max(200),
  tool_version: z.string().min(1).max(200).default('*'),
  fn: z.string().min(1).optional(),
  input: JsonObject,
  context: CallContextSchema.default(() => CallContextSchema.parse({})),
  constraints: CallConstraintsSchema.default({}),
  provenance: JsonObject.optional(),
  dry_run: z.boolean().default(false),
});
export type RequestEnvelopeInput = z.input<typeof RequestEnvelopeSchema>;
export type RequestEnvelope = z.infer<typeof RequestEnvelopeSchema>;

/** An error as it crosses the wire: taxonomy code, short message, machine details, fix hint. */
export const WireErrorSchema = z.strictObject({
  code: z.string().regex(ERROR_CODE_PATTERN, 'must be a taxonomy code such as S-TOOL-TRAP'),
  message: z.string().min(1).max(4096),
  details: JsonObject.default({}),
  hint: z.string().max(4096).optional(),
});
export type WireError = z.infer<typeof WireErrorSchema>;

/** Per-call measurements; always present (zero is a valid value). */
export const CallMetricsSchema = z.strictObject({
  duration_ms: z.number().min(0),
  fuel_used: z.number().int().min(0),
  memory_peak_pages: z.number().int().min(0),
});
export type CallMetrics = z.infer<typeof CallMetricsSchema>;

/** Which exact tool build answered. */
export const CallProvenanceSchema = z.strictObject({
  tool_id: z.string(),
  tool_version: z.string(),
  digest: z.string().nullable(),
});

/** The response of a call: exactly one of four outcomes. */
export const ResponseEnvelopeSchema = z.strictObject({
  call_id: z.string(),
  status: z.enum(['success', 'retryable_error', 'terminal_error', 'invalid_request']),
  output: z.unknown().optional(),
  error: WireErrorSchema.optional(),
  side_effects: z.array(JsonObject),
  metrics: CallMetricsSchema,
  provenance: CallProvenanceSchema,
  warnings: z.array(z.string()),
  commit_token: z.string().nullable(),
  /** The run this call is (null when the call never became a run, e.g. an invalid request). */
  run_id: z.string().nullable(),
  /** True when the stored result of an earlier successful run was returned without executing. */
  replayed: z.boolean(),
});
export type ResponseEnvelope = z.infer<typeof ResponseEnvelopeSchema>;

/** `execute` result: the tool's output. */
export const GuestOkSchema = z.strictObject({ status: z.literal('ok'), output: z.unknown() });
/** `execute` result: the tool refused or failed, with a taxonomy code. */
export const GuestErrorSchema = z.strictObject({ status: z.literal('error'), error: WireErrorSchema });

/** `abi_version` of a capability envelope: 1, or 2 (capability ABI 2, the bulk path). */
const AbiVersion = z.union(CAPABILITY_ABI_VERSIONS.map((v) => z.literal(v)) as [z.ZodLiteral<1>, z.ZodLiteral<2>]);

/** A capability call as the guest sends it (import argument, or inside a terminal envelope). */
export const CapabilityCallSchema = z.strictObject({
  name: z.string().min(1).max(200),
  args: JsonObject.default({}),
});

/** `execute` result: a terminal capability call performed by the host (ABI-OUTPUT-002). */
export const GuestCapabilityCallSchema = z.strictObject({
  status: z.literal('capability_call'),
  abi_version: AbiVersion,
  capability_call: CapabilityCallSchema,
});

/** Everything `execute` may return (ABI-OUTPUT-002). */
export const GuestOutputSchema = z.discriminatedUnion('status', [GuestOkSchema, GuestErrorSchema, GuestCapabilityCallSchema]);
export type GuestOutput = z.infer<typeof GuestOutputSchema>;

/** The argument of `helix_v1.capability_call`. */
export const CapabilityRequestSchema = z.strictObject({
  abi_version: AbiVersion,
  name: z.string().min(1).max(200),
  args: JsonObject.default({}),
});
export type CapabilityRequest = z.infer<typeof CapabilityRequestSchema>;

/** What `helix_v1.capability_call` returns into guest memory. */
export const CapabilityResponseSchema = z.discriminatedUnion('status', [
  z.strictObject({
    status: z.literal('ok'),
    abi_version: AbiVersion,
    capability_result: z.strictObject({ name: z.string(), result: z.unknown() }),
  }),
  z.strictObject({ status: z.literal('error'), abi_version: AbiVersion, error: WireErrorSchema }),
]);
export type CapabilityResponse = z.infer<typeof CapabilityResponseSchema>;
