// Shared pieces of the secret tests: the secret, every form of it a test looks for (computed
// here with Node's encoders, apart from the host's own list), the guest templates that make each
// form, the test toolpacks and their policies, a real host over them, and a search of files and
// bytes for any form.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../../abi/index.js';
import { createHost, type Host } from '../../host/index.js';
import { compileGuest } from './as-guest.js';
import { startServer, type TestServer } from './http-test-kit.js';
import { toolpacksDir, tempDir, type ToolpackSpec } from './toolpack.js';

/** A secret with characters that every encoding treats differently: space, quotes, slash, plus, non-ASCII. */
export const SECRET = 'hunter2 "s3cr3t"/ä+Ω-Kb9~x';
export const SECRET_ENV = 'HELIX_TEST_SECRET_PATHS';
export const MARKER = '[secret:db_password]';
/** The store's secret hash key beside the LMDB file (ABI-SECRET-008). */
export const SECRET_KEY_FILE = 'secret-hash.key';

/** The base64 characters fixed by the secret's bytes alone, when it starts `align` bytes into a group. */
function core(align: number, alphabet: 'base64' | 'base64url'): string {
  const bytes = Buffer.concat([Buffer.alloc(align, 0x41), Buffer.from(SECRET)]);
  const text = bytes.toString(alphabet);
  return text.slice(Math.ceil((8 * align) / 6), Math.floor((8 * bytes.length) / 6));
}

/** Every form of SECRET a stored byte must never hold (ABI-SECRET-002), by name. */
export const FORMS: ReadonlyArray<readonly [string, string]> = [
  ['raw', SECRET],
  ['json', JSON.stringify(SECRET).slice(1, -1)],
  ...[0, 1, 2].flatMap(
    (a) =>
      [
        [`base64@${a}`, core(a, 'base64')],
        [`base64url@${a}`, core(a, 'base64url')],
      ] as Array<[string, string]>,
  ),
  ['hex', Buffer.from(SECRET).toString('hex')],
  ['HEX', Buffer.from(SECRET).toString('hex').toUpperCase()],
  ['percent', encodeURIComponent(SECRET)],
];

/** The forms found in `bytes`. */
export function formsIn(bytes: Uint8Array | string): string[] {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return FORMS.filter(([, text]) => buf.includes(Buffer.from(text))).map(([name]) => name);
}

/** The forms found in the name or the content of any file under `dir`, as `path: form`. */
export function formsInTree(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name);
    for (const form of formsIn(name)) found.push(`${name} (name): ${form}`);
    if (statSync(file).isFile()) for (const form of formsIn(readFileSync(file))) found.push(`${name}: ${form}`);
  }
  return found;
}

/** Guest templates (conformance/assembly/secret-paths.ts), one per covered form and alignment: the conformance kit's. */
export { TEMPLATES } from '../../conformance/kit/caps-kit.js';

const limits = { maxInputBytes: 1_000_000, maxOutputBytes: 4_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 1000 };

/** The test toolpacks: s.paths (kv, log, http, the secret), s.writer (an output role, kv, log and the secret), s.plain (well-behaved). */
export function secretToolpacks(module: Uint8Array, origin: string): ToolpackSpec[] {
  const allow = ['kv.put', 'kv.get', 'kv.list', 'log.emit', 'http.request', 'secrets.get.db_password'];
  return [
    { id: 's.paths', module, manifest: { limits, capabilities: { abiVersion: 1, allow, network: [origin] } } },
    {
      id: 's.writer',
      module,
      manifest: {
        limits,
        capabilities: { abiVersion: 1, allow: ['artifact.write', 'kv.put', 'log.emit', 'secrets.get.db_password'] },
        declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }],
      },
    },
    { id: 's.plain', module, manifest: { limits, capabilities: { abiVersion: 1, allow: ['kv.get'] } } },
  ];
}

/** Writes a policy granting the test toolpacks; `source` is the secret's source, `secretWrites` the rules (omitted: defaults). */
export function writeSecretPolicy(file: string, origin: string, source: string, secretWrites?: string): void {
  const lines = [
    'version: 1',
    'tools: { allow: ["s.*"] }',
    'grants:',
    '  "s.*": ["kv.*", "log.*", "artifact.*", "http.request", "secrets.get.db_password"]',
    'secrets:',
    `  db_password: ${source}`,
    'network:',
    `  allow: ["${origin}"]`,
    '  allowPrivate: ["127.0.0.1"]',
    ...(secretWrites === undefined ? [] : [`secretWrites: ${secretWrites}`]),
  ];
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** A capability call for the guest. */
export const call = (name: string, args: Record<string, unknown> = {}): { name: string; args: Record<string, unknown> } => ({ name, args });

/** A guest's raw capability answer. */
export interface Answer {
  status: 'ok' | 'error';
  capability_result?: { name: string; result: Record<string, unknown> };
  error?: { code: string; message: string; details: Record<string, unknown> };
}

/** A real host over the test toolpacks, the secret in an env source, and an upstream that echoes what it was sent. */
export interface SecretHost {
  readonly host: Host;
  readonly home: string;
  readonly upstream: TestServer;
  /** One call; `answers` are the guest's capability answers (empty when the run failed). */
  guest(tool: string, input: Record<string, unknown>): Promise<ResponseEnvelope & { answers: Answer[] }>;
  /** Whether a well-behaved call in the same host succeeds. */
  serves(): Promise<boolean>;
  close(): Promise<void>;
}

/** Starts a SecretHost under `secretWrites` (a YAML flow mapping; omitted: the defaults). */
export async function startSecretHost(secretWrites?: string): Promise<SecretHost> {
  const home = tempDir('helix-secret-home-');
  // The echo makes the answer of http.request carry the secret too.
  const upstream = await startServer((req, res) => res.end(`auth=${req.headers.authorization ?? ''} url=${req.url}`));
  const plugins = await toolpacksDir(secretToolpacks(await compileGuest('secret-paths.ts'), upstream.origin));
  const policy = path.join(plugins.dir, 'policy.yaml');
  writeSecretPolicy(policy, upstream.origin, `{ env: ${SECRET_ENV} }`, secretWrites);
  process.env[SECRET_ENV] = SECRET;
  const host = await createHost({ toolpacksDir: plugins.dir, policyFile: policy, home: home.dir });
  const guest = async (tool: string, input: Record<string, unknown>) => {
    const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input }));
    return { ...r, answers: ((r.output as { answers?: Answer[] } | undefined)?.answers ?? []) as Answer[] };
  };
  return {
    host,
    home: home.dir,
    upstream,
    guest,
    serves: async () => (await guest('s.plain', { calls: [call('kv.get', { key: 'nothing' })] })).status === 'success',
    async close() {
      await host.close();
      await upstream.close();
      plugins.cleanup();
      home.cleanup();
    },
  };
}
