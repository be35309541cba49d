// Random envelopes for fuzzing the parsers at the ABI's edges: a client's request envelope
// (ABI-JSON-005, the request schema), a guest's output envelope (ABI-OUTPUT-001/002), a guest's
// capability request (ABI-CAP-001) and the arguments of every capability (ABI-CAP-005): each
// valid, then mutated in shape (mutateJson) or in bytes (mutateBytes).
import { mutateBytes, mutateJson, randomJson, randomObject, type Json } from './fuzz-json.js';
import type { Rand } from './fuzz-random.js';

const encoder = new TextEncoder();

/** Values worth trying for each argument name any capability takes (besides random ones). */
const ARG_VALUES: Record<string, readonly Json[]> = {
  level: ['debug', 'info', 'warn', 'error', 'INFO', 'trace', ''],
  event: ['started', '', 'x'.repeat(300), 'é'],
  fields: [{}, { a: 1 }, { nested: { deep: [1, 2] } }, []],
  key: ['k', '', 'a/b', 'x'.repeat(600), 'é'],
  value: [1, 'v', { a: [1, null] }, null, [], 'x'.repeat(2000)],
  prefix: ['', 'k', 'zz'],
  limit: [0, 1, 10, 100, 1000, 1001, 1.5, -1],
  artifact_id: ['art_0000', `sha256:${'0'.repeat(64)}`, '', '../x'],
  offset: [0, 1, -1, 2 ** 40, 0.5],
  length: [0, 1, 1024, -5, 2 ** 31],
  decompress: [true, false, 'yes'],
  encoding: ['base64', 'utf8', 'hex', 'raw', ''],
  role: ['report', 'log', 'out', 'Bad'],
  data: ['', 'aGVsbG8=', '!!notbase64', 'hello'],
  final: [true, false],
  type: ['text', 'json', 'fasta', ''],
  label: ['a label', ''],
  name: ['db_password', 'api_key', 'nope', ''],
  method: ['GET', 'POST', 'PUT', 'DELETE', 'get', 'TRACE', 'CONNECT'],
  url: [
    'http://127.0.0.1:9/x',
    'https://example.org:443/',
    'ftp://example.org/',
    'not a url',
    'http://[::1]:9/',
    'http://169.254.169.254/',
  ],
  headers: [{}, { 'x-a': 'b' }, { host: 'evil' }, { a: 1 }],
  body: ['', 'data', 'aGk='],
  body_encoding: ['utf8', 'base64', 'hex'],
  max_response_bytes: [1, 1024, 0, 2 ** 40],
  image: [`sha256:${'a'.repeat(64)}`, 'alpine', `alpine:3.20@sha256:${'b'.repeat(64)}`],
  argv: [['echo', 'hi'], [], ['a\u0000b'], 'echo hi'],
  env: [{}, { A: 'b' }, { '': 'x' }],
  network: ['none', 'bridge', 'host', true],
  inputs: [[], [{ artifact_id: 'art_0', path: 'in.txt' }], {}],
  outputs: [[], [{ file: 'out.txt', role: 'report' }]],
  logs: ['keep', 'drop', true],
  limits: [{}, { memory_mb: 64 }, { cpus: 1 }],
  job_id: ['12345', '', 12345, 'x'],
  partition: ['debug', ''],
  account: ['acct'],
  qos: ['normal'],
};

/** The argument names of a capability (from its zod object schema), when it has them. */
export function argNames(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape === undefined ? [] : Object.keys(shape);
}

/** Arguments for a capability taking `names`: each name kept or not, with a plausible or random value; sometimes an unknown name. */
export function randomArgs(r: Rand, names: readonly string[]): { [k: string]: Json } {
  const args: { [k: string]: Json } = {};
  for (const n of names) {
    if (!r.chance(0.75)) continue;
    const known = ARG_VALUES[n];
    args[n] = known !== undefined && r.chance(0.7) ? structuredClone(r.pick(known)) : randomJson(r, 1);
  }
  if (r.chance(0.15)) args[r.pick(['extra', 'Key', 'path', '__x'])] = randomJson(r, 1);
  return args;
}

/** A guest's error object (an envelope's `error`, an Extism plugin's error text): a taxonomy code or not, a message within bounds or not. */
export function guestErrorValue(r: Rand): { [k: string]: Json } {
  const error: { [k: string]: Json } = {
    code: r.pick([
      'S-TOOL-TRAP',
      'I-REQ-INPUT',
      'R-UPSTREAM-TIMEOUT',
      'C-CONTRACT-INPUT',
      'T-TOOL-OOPS',
      'x-bad',
      'S-',
      'A-AUTH-FORBIDDEN',
    ]),
    message: r.pick(['it failed', '', 'x'.repeat(5000)]),
  };
  if (r.chance(0.5)) error.details = randomObject(r);
  if (r.chance(0.3)) error.hint = 'try again';
  return error;
}

/** A guest's output envelope as a value: ok, error (taxonomy code or not) or a terminal capability call. */
export function guestOutputValue(r: Rand, capabilityNames: readonly string[]): Json {
  switch (r.int(0, 2)) {
    case 0:
      return { status: 'ok', output: r.chance(0.8) ? randomObject(r) : randomJson(r) };
    case 1:
      return { status: 'error', error: guestErrorValue(r) };
    default: {
      const name = r.pick([...capabilityNames, 'no.such_thing']);
      return { status: 'capability_call', abi_version: r.pick([1, 2, 3]), capability_call: { name, args: randomArgs(r, []) } };
    }
  }
}

/** A capability request envelope as a value: a capability's name (or an unknown one) and random arguments for it. */
export function capabilityRequestValue(r: Rand, capabilities: ReadonlyMap<string, { readonly args: unknown }>): Json {
  const names = [...capabilities.keys()];
  const name = r.chance(0.9) ? r.pick(names) : r.pick(['no.such_thing', 'kv', '', 'KV.GET']);
  const cap = capabilities.get(name);
  const value: { [k: string]: Json } = {
    abi_version: r.chance(0.9) ? 1 : r.pick<Json>([2, 0, '1', null]),
    name,
    args: randomArgs(r, cap === undefined ? [] : argNames(cap.args)),
  };
  if (r.chance(0.1)) delete value.args;
  return value;
}

/** How a case was made, for the report. */
export interface Mutated {
  readonly bytes: Uint8Array;
  readonly what: string;
}

/** A value's JSON text as bytes: as it is, mutated in shape, or mutated in bytes. */
export function mutatedText(r: Rand, value: Json): Mutated {
  const choice = r.int(0, 3);
  if (choice === 0) return { bytes: encoder.encode(JSON.stringify(value)), what: 'as generated' };
  if (choice <= 2) {
    const m = mutateJson(r, value);
    return { bytes: encoder.encode(JSON.stringify(m.value)), what: m.what };
  }
  return mutateBytes(r, encoder.encode(JSON.stringify(value)));
}

/** A request envelope for `toolId` with optional members valid or not, often mutated in shape. */
export function requestEnvelopeValue(r: Rand, toolId: string): Json {
  const env: { [k: string]: Json } = { tool_id: toolId, input: randomObject(r) };
  if (r.chance(0.3)) env.call_id = r.pick(['c-1', '', 'x'.repeat(201)]);
  if (r.chance(0.3)) env.tool_version = r.pick(['*', '1.0.0', '^1', '', '2.0.0', 'latest']);
  if (r.chance(0.2)) env.dry_run = r.pick<Json>([true, false, 'yes']);
  if (r.chance(0.3))
    env.context = r.pick<Json>([
      {},
      { actor_id: 'a' },
      { clock: 'wall', env: 'prod' },
      { env: 'moon' },
      { scopes: ['x'] },
      { trace_id: '' },
      [],
    ]);
  if (r.chance(0.3))
    env.constraints = r.pick<Json>([
      {},
      { timeout_ms: 1000 },
      { timeout_ms: 0 },
      { memory_mb_limit: 1 },
      { idempotency_key: 'short' },
      { retry_policy: { max_attempts: 1 } },
      { net_allowlist: [] },
    ]);
  if (r.chance(0.1)) env.provenance = randomObject(r);
  if (r.chance(0.1)) env.fn = r.pick(['execute', '']);
  return r.chance(0.5) ? env : mutateJson(r, env).value;
}
