// Conformance checks: secrets. A guest granted one secret (conformance/assembly/secret-paths.ts)
// tries to get it, raw and in every covered encoding (ABI-SECRET-002), into each place the host
// keeps or shows: kv keys and values, artifact pieces (across pieces too) and labels, log lines,
// the output, its error message, capability names and arguments, the journal, the audit trail,
// the run record, `helix runs show` and an RO-Crate export. After each check every file of the
// check's Helix home (the LMDB file included) and every exported file is searched for every form.
import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ResponseEnvelope } from '../../abi/index.js';
import { getArtifact } from '../../host/4-calls/artifacts/index.js';
import { readJournal } from '../../host/4-calls/broker/journal.js';
import { hostStore, type Host } from '../../host/5-host/host.js';
import { packageRoot } from '../../host/1-base/paths.js';
import { getRun } from '../../host/4-calls/runs/run-store.js';
import { verifyRun } from '../../host/4-calls/runs/verify.js';
import { readAudit } from '../../host/3-store/audit.js';
import { readBlobBytes } from '../../host/3-store/blobs.js';
import { kvGet } from '../../host/3-store/kv.js';
import { expect, expectOutcome, expectSuccess, type Check, type CheckContext, type CheckEnv, type PackSpec } from '../check.js';
import { checkDefaultPolicy } from '../runner.js';
import {
  extismForwarder,
  FORMS,
  formsIn,
  formsInTree,
  MARKER,
  SECRET,
  SECRET_KEY_FILE,
  SECRET_NAME,
  startUpstream,
  TEMPLATES,
  type Hit,
} from '../kit/caps-kit.js';

const run = promisify(execFile);
const LIMITS = { maxInputBytes: 1_000_000, maxOutputBytes: 4_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 1000 };
const BASE_GRANTS = ['clock.*', 'log.*', 'kv.*', 'artifact.*'];

interface Answer {
  status: 'ok' | 'error';
  capability_result?: { name: string; result: any };
  error?: { code: string; message: string; details: any };
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, args });

/** The secret-paths guest with these capabilities (and more manifest fields). */
function guest(id: string, allow: readonly string[], more: Record<string, unknown> = {}): PackSpec {
  return {
    id,
    module: '',
    guest: 'secret-paths.ts',
    manifest: {
      limits: LIMITS,
      capabilities: {
        abiVersion: 1,
        allow: [...allow, `secrets.get.${SECRET_NAME}`],
        ...(more.network === undefined ? {} : { network: more.network }),
      },
      ...(more.declaredOutputs === undefined ? {} : { declaredOutputs: more.declaredOutputs }),
    },
  };
}

const paths = (): PackSpec => guest('s.paths', ['kv.put', 'kv.get', 'kv.list', 'log.emit', 'clock.now_unix']);
const writer = (): PackSpec =>
  guest('s.writer', ['artifact.write', 'log.emit'], { declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }] });

/** The policy of a secret check: the secret in a file of the check's directory (mode 0600), granted to s.*; `secretWrites` when given. */
function secretPolicy(env: CheckEnv, secretWrites?: Record<string, string>, more: Record<string, unknown> = {}): Record<string, unknown> {
  const file = path.join(env.dir, `${SECRET_NAME}.secret`);
  writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
  return {
    ...checkDefaultPolicy(env),
    grants: { '*': BASE_GRANTS, 's.*': [`secrets.get.${SECRET_NAME}`, 'http.request'] },
    secrets: { [SECRET_NAME]: { file } },
    ...(secretWrites === undefined ? {} : { secretWrites }),
    ...more,
  };
}

function answersOf(r: ResponseEnvelope): Answer[] {
  return ((r.output as { answers?: Answer[] } | undefined)?.answers ?? []) as Answer[];
}

/** Every record of a run as one text: journal, audit, run record, log artifact. */
async function runRecords(host: Host, runId: string): Promise<string> {
  const store = hostStore(host);
  const rec = getRun(store, runId)!;
  const log =
    rec.log_artifact_id === null ? '' : (await readBlobBytes(store, getArtifact(store, rec.log_artifact_id).sha256, 1e8)).toString();
  return JSON.stringify([readJournal(store, runId), readAudit(store).filter((a) => a.run_id === runId), rec]) + log;
}

/** Fails unless no form of the secret is in `text`. */
function expectClean(where: string, text: string | Uint8Array): void {
  const found = formsIn(text);
  expect(found.length === 0, `${where} holds the secret as ${found.join(', ')}`);
}

/** Flushes the store and searches every file of the check's Helix home for every form; records what was searched. */
async function scanHome(ctx: CheckContext): Promise<void> {
  const host = await ctx.host();
  await hostStore(host).flushed();
  const scan = formsInTree(host.home);
  ctx.observe('home_scan', { files: scan.files, bytes: scan.bytes, forms_searched: FORMS.length, found: scan.found });
  expect(scan.found.length === 0, `the Helix home holds the secret: ${scan.found.join('; ')}`);
}

/** The guest got the value: the host shows the marker where the guest put it. */
function expectMarker(where: string, text: string): void {
  expect(text.includes(MARKER), `${where} has no ${MARKER}: the guest may never have received the secret`);
}

/** The built CLI as a child process, bounded; never throws on a non-zero exit. */
async function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(packageRoot(), 'dist', 'cli', 'main.js'), ...args], {
      cwd: packageRoot(),
      timeout: 60_000,
      maxBuffer: 1 << 26,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

export const secretChecks: readonly Check[] = [
  {
    id: 'secrets.kv-refused',
    title: 'kv.put refuses a key or value carrying the secret in any covered form, and stores none of them',
    category: 'secrets',
    abi: ['ABI-SECRET-003', 'ABI-SECRET-002', 'ABI-SECRET-001'],
    engines: ['helix'],
    expected: `under the default secretWrites.kv: refuse, each of ${TEMPLATES.length} forms (raw, JSON-escaped, base64 and base64url at each alignment, Basic auth, hex, HEX, percent) in a nested value and in a key is answered A-AUTH-SECRET-WRITE naming the secret, kv.put, the JSON Pointer and the rule, never the value; kv.list stays empty; no file of the Helix home holds any form`,
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const calls = TEMPLATES.flatMap(([, t], i) => [
        call('kv.put', { key: `value-${i}`, value: { deep: { note: `x ${t} y` } } }),
        call('kv.put', { key: `key-${i}-${t}`, value: i }),
      ]);
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, calls: [...calls, call('kv.list', { prefix: '' })] });
      expectSuccess(r);
      const a = answersOf(r);
      for (const [i, [label]] of TEMPLATES.entries()) {
        const [onValue, onKey] = [a[2 * i]!, a[2 * i + 1]!];
        const d = onValue.error?.details ?? {};
        expect(
          onValue.error?.code === 'A-AUTH-SECRET-WRITE' &&
            d.secret === SECRET_NAME &&
            d.where === 'kv.put' &&
            d.path === '/value/deep/note' &&
            d.rule === 'secretWrites.kv',
          `${label} in a value was answered ${JSON.stringify(onValue).slice(0, 300)}`,
        );
        expect(
          onKey.error?.code === 'A-AUTH-SECRET-WRITE' && onKey.error.details.path === '/key',
          `${label} in a key was answered ${JSON.stringify(onKey).slice(0, 300)}`,
        );
      }
      expect(JSON.stringify(a.at(-1)!.capability_result?.result) === '{"keys":[]}', `something was stored: ${JSON.stringify(a.at(-1))}`);
      expectClean('the response', JSON.stringify(r));
      expectClean("the run's records", await runRecords(host, r.run_id!));
      const refused = readAudit(hostStore(host)).filter(
        (x) => x.run_id === r.run_id && (x as { decision?: string }).decision === 'refused',
      ).length;
      expect(refused === 2 * TEMPLATES.length, `${refused} refusals were audited, not ${2 * TEMPLATES.length}`);
      ctx.observe('encodings_reported', [...new Set(a.slice(0, -1).map((x) => x.error?.details?.encoding))]);
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.kv-redacted',
    title: 'Under secretWrites.kv: redact, kv keys and values are stored with the marker in place of every form',
    category: 'secrets',
    abi: ['ABI-SECRET-003'],
    engines: ['helix'],
    expected:
      'kv.put of key "k {{hex}}" and a value with the secret as base64 in a string and percent-encoded as an object key is answered ok; the store holds key "k [secret:db_password]" and a value with markers in both places; no file of the Helix home holds any form',
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env, { kv: 'redact' }),
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('s.paths', {
        secret: SECRET_NAME,
        calls: [call('kv.put', { key: 'k {{hex}}', value: { note: 'x {{b64|a}} y', '{{pct}}': 1 } }), call('kv.list', { prefix: 'k ' })],
      });
      expectSuccess(r);
      const a = answersOf(r);
      expect(a[0]?.status === 'ok', `kv.put was answered ${JSON.stringify(a[0])}`);
      expect(
        JSON.stringify(a[1]?.capability_result?.result) === JSON.stringify({ keys: [`k ${MARKER}`] }),
        `kv.list gives ${JSON.stringify(a[1])}`,
      );
      const value = kvGet(hostStore(host), 's.paths', `k ${MARKER}`) as Record<string, unknown> | undefined;
      expect(
        value !== undefined && String(value.note).includes(MARKER) && value[MARKER] === 1,
        `the stored value is ${JSON.stringify(value)}`,
      );
      expectClean('the stored value', JSON.stringify(value));
      ctx.observe('stored_value', value);
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.artifact-refused',
    title: 'artifact.write refuses the secret, also split across two pieces, encoded, or in the label, and drops the role',
    category: 'secrets',
    abi: ['ABI-SECRET-004', 'ABI-SECRET-001'],
    engines: ['helix'],
    expected:
      'under the default secretWrites.artifacts: refuse, a piece that completes the raw secret begun in the piece before is answered A-AUTH-SECRET-WRITE (path /data, role report, encoding raw) and a later write of the role gets refused_before; a base64-encoded piece, a hex form split over two pieces, and a label carrying base64url are refused the same way; each run fails C-CONTRACT-DECLARED-OUTPUTS naming the refused role; the journal keeps pieces as data_length only; not even the first half of the secret is in the store file',
    packs: () => [writer()],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const journaled = (r: ResponseEnvelope) =>
        readJournal(store, r.run_id!)
          .slice(1)
          .map((e) => e.error ?? e.outcome);
      const split = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [
          call('artifact.write', { role: 'report', data: 'head {{raw|||0|9}}' }),
          call('artifact.write', { role: 'report', data: '{{raw|||9|}} tail', final: true }),
          call('artifact.write', { role: 'report', data: 'more', final: true }),
        ],
      });
      expectOutcome(split, 'terminal_error', 'C-CONTRACT-DECLARED-OUTPUTS');
      const [first, second, third] = journaled(split) as [
        unknown,
        { code: string; details: Record<string, unknown> },
        { code: string; details: Record<string, unknown> },
      ];
      expect(first === 'ok', `the first half was answered ${JSON.stringify(first)}`);
      expect(
        second?.code === 'A-AUTH-SECRET-WRITE' &&
          second.details.path === '/data' &&
          second.details.role === 'report' &&
          second.details.encoding === 'raw',
        `the second half was answered ${JSON.stringify(second)}`,
      );
      expect(
        third?.code === 'A-AUTH-SECRET-WRITE' && third.details.refused_before === true,
        `a later write was answered ${JSON.stringify(third)}`,
      );
      expect(JSON.stringify(split.error!.details).includes('role report was refused'), `the run's error: ${JSON.stringify(split.error)}`);
      expect(
        JSON.stringify(readJournal(store, split.run_id!)[1]!.args) === JSON.stringify({ role: 'report', data_length: 'head '.length + 9 }),
        'the journal keeps more than the piece length',
      );
      const encoded = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [call('artifact.write', { role: 'report', data: '{{b64|xy|z}}', encoding: 'base64', final: true })],
      });
      const hexSplit = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [
          call('artifact.write', { role: 'report', data: 'a {{hex||||20}}' }),
          call('artifact.write', { role: 'report', data: '{{hex|||20|}} b', final: true }),
        ],
      });
      const label = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [call('artifact.write', { role: 'report', data: 'fine', label: 'by {{b64url|a}}', final: true })],
      });
      expect(
        (journaled(encoded)[0] as { code?: string }).code === 'A-AUTH-SECRET-WRITE',
        `the base64 piece was answered ${JSON.stringify(journaled(encoded))}`,
      );
      expect(
        (journaled(hexSplit)[1] as { details?: { encoding?: string } }).details?.encoding === 'hex',
        `the split hex was answered ${JSON.stringify(journaled(hexSplit))}`,
      );
      expect(
        (journaled(label)[0] as { details?: { path?: string } }).details?.path === '/label',
        `the label was answered ${JSON.stringify(journaled(label))}`,
      );
      for (const r of [split, encoded, hexSplit, label]) {
        expectOutcome(r, 'terminal_error', 'C-CONTRACT-DECLARED-OUTPUTS');
        expectClean("a refused run's records", await runRecords(host, r.run_id!));
      }
      await store.flushed();
      expect(
        !readFileSync(host.storePath).includes(Buffer.from(`head ${SECRET.slice(0, 9)}`)),
        'the held-back first half of the secret was written to the store',
      );
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.artifact-redacted',
    title: 'Under secretWrites.artifacts: redact, pieces (across pieces too), the label and the preview are stored with markers',
    category: 'secrets',
    abi: ['ABI-SECRET-004'],
    engines: ['helix'],
    expected:
      'the run succeeds; the stored bytes read "line 1 [secret:db_password]" where the raw secret straddled two pieces, carry the marker for a base64url form and a base64-encoded piece; the label is "for [secret:db_password]"; the preview shows the marker; no file of the Helix home holds any form',
    packs: () => [writer()],
    policy: (_e, env) => secretPolicy(env, { artifacts: 'redact' }),
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const r = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [
          call('artifact.write', { role: 'report', data: 'line 1 {{raw|||0|7}}', label: 'for {{json}}' }),
          call('artifact.write', { role: 'report', data: '{{raw|||7|}}\nline 2 {{b64url|ab}}\n' }),
          call('artifact.write', { role: 'report', data: '{{b64|xy|\n}}', encoding: 'base64', final: true }),
        ],
      });
      expectSuccess(r);
      const artifact = getArtifact(store, getRun(store, r.run_id!)!.outputs[0]!.artifact_id);
      const bytes = await readBlobBytes(store, artifact.sha256, 1e6);
      const lines = bytes.toString().split('\n');
      expect(
        lines[0] === `line 1 ${MARKER}` && lines[2] === `xy${MARKER}` && lines[1]!.includes(MARKER),
        `the stored bytes are ${JSON.stringify(bytes.toString())}`,
      );
      expectClean('the stored bytes', bytes);
      expect(artifact.label === `for ${MARKER}`, `the label is ${artifact.label}`);
      expect(JSON.stringify(artifact.preview).includes(MARKER), `the preview is ${JSON.stringify(artifact.preview)}`);
      expectClean('the artifact record', JSON.stringify(artifact));
      ctx.observe('stored', bytes.toString());
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.log-output-records',
    title: 'Log lines (keys and values), the output, the journal, the audit and the run log carry the marker in place of every form',
    category: 'secrets',
    abi: ['ABI-SECRET-005', 'ABI-SECRET-006', 'ABI-SECRET-007', 'ABI-SECRET-002'],
    engines: ['helix'],
    expected: `under the default rules (log and output: redact), log.emit with ${TEMPLATES.length} fields whose keys and values carry each form is answered ok, and the output echoing every form succeeds; the response, the audit line (its keys included), the log artifact, the journal and the run record hold at least one marker per form and no form`,
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const fields = Object.fromEntries(TEMPLATES.map(([label, t]) => [`${label} ${t}`, `before ${t} after`]));
      const echo = TEMPLATES.map(([, t]) => t).join(' ');
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, calls: [call('log.emit', { event: 'leak', fields })], output: echo });
      expectSuccess(r);
      expect(answersOf(r)[0]?.status === 'ok', `log.emit was answered ${JSON.stringify(answersOf(r)[0])}`);
      const output = JSON.stringify(r.output);
      expectClean('the output', output);
      const markers = output.split(MARKER).length - 1;
      expect(markers >= TEMPLATES.length, `the output has ${markers} markers for ${TEMPLATES.length} forms`);
      const records = await runRecords(host, r.run_id!);
      expectClean("the run's records", records);
      expectMarker("the run's records", records);
      const line = readAudit(hostStore(host)).find((a) => a.kind === 'log' && a.run_id === r.run_id) as
        | { event?: string; fields?: Record<string, unknown> }
        | undefined;
      expect(
        line !== undefined &&
          Object.keys(line.fields ?? {}).every((k) => k.includes(MARKER)) &&
          Object.values(line.fields ?? {}).every((v) => String(v).includes(MARKER)),
        `the audit line is ${JSON.stringify(line).slice(0, 400)}`,
      );
      ctx.observe('output_markers', markers);
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.log-refused',
    title: 'Under secretWrites.log: refuse, a log line carrying the secret is refused and not kept; the guest goes on',
    category: 'secrets',
    abi: ['ABI-SECRET-005'],
    engines: ['helix'],
    expected:
      'log.emit with "Bearer <base64 of the secret>" is answered A-AUTH-SECRET-WRITE (where log.emit, path /fields/token, rule secretWrites.log); the next, clean log.emit is answered ok; only the clean line is in the audit trail and the log artifact',
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env, { log: 'refuse' }),
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('s.paths', {
        secret: SECRET_NAME,
        calls: [call('log.emit', { event: 'e', fields: { token: 'Bearer {{b64}}' } }), call('log.emit', { event: 'fine' })],
      });
      expectSuccess(r);
      const [refused, fine] = answersOf(r);
      const d = refused?.error?.details ?? {};
      expect(
        refused?.error?.code === 'A-AUTH-SECRET-WRITE' &&
          d.where === 'log.emit' &&
          d.path === '/fields/token' &&
          d.rule === 'secretWrites.log',
        `the line was answered ${JSON.stringify(refused)}`,
      );
      expect(fine?.status === 'ok', `the clean line was answered ${JSON.stringify(fine)}`);
      const lines = readAudit(hostStore(host))
        .filter((a) => a.kind === 'log' && a.run_id === r.run_id)
        .map((a) => (a as { event?: string }).event);
      expect(JSON.stringify(lines) === '["fine"]', `the audit keeps the lines ${JSON.stringify(lines)}`);
      ctx.observe('kept_lines', lines);
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.output-refused',
    title: 'Under secretWrites.output: refuse, an output carrying the secret ends the run and is neither recorded nor returned',
    category: 'secrets',
    abi: ['ABI-SECRET-006'],
    engines: ['helix'],
    expected:
      'terminal_error A-AUTH-SECRET-WRITE with details.where "output", path /output/echo and encoding hex-upper; the run record is failed with output_sha256 null; no form in the response, the records or the Helix home',
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env, { output: 'refuse' }),
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, output: 'here: {{HEX}}' });
      expectOutcome(r, 'terminal_error', 'A-AUTH-SECRET-WRITE');
      const d = r.error!.details;
      expect(d.where === 'output' && d.path === '/output/echo' && d.encoding === 'hex-upper', `details: ${JSON.stringify(d)}`);
      expect(r.output === undefined || r.output === null, 'the output was returned');
      const rec = getRun(hostStore(host), r.run_id!)!;
      expect(rec.status === 'failed' && rec.output_sha256 === null, `the run record: ${rec.status}, output_sha256 ${rec.output_sha256}`);
      expectClean('the response', JSON.stringify(r));
      expectClean("the run's records", await runRecords(host, r.run_id!));
      ctx.observe('error', r.error);
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.error-names-args',
    title:
      "The secret in a guest's error message, a capability name and a capability's arguments is redacted in the response, journal and audit",
    category: 'secrets',
    abi: ['ABI-SECRET-007', 'ABI-SECRET-001'],
    engines: ['helix'],
    expected:
      'a call to the unknown capability x.unknown whose args carry the secret as an object key (hex) and a value (base64) gets the forbidden answer and is journaled with markers in both places; kv.get with the raw secret as its key is journaled with the marker in its args; the guest error "failed on <base64> and <hex>" ends terminal_error with message "failed on ...[secret:db_password]... and [secret:db_password]"; no form anywhere',
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const r = await ctx.call('s.paths', {
        secret: SECRET_NAME,
        calls: [call('x.unknown', { '{{hex}}': '{{b64|ab}}' }), call('kv.get', { key: '{{raw}}' })],
        error: 'failed on {{b64|a}} and {{hex}}',
      });
      expectOutcome(r, 'terminal_error');
      expect(
        /^failed on .*\[secret:db_password\].* and \[secret:db_password\]$/.test(r.error!.message),
        `the error message is ${r.error!.message}`,
      );
      expectClean('the response', JSON.stringify(r));
      const journal = readJournal(store, r.run_id!);
      expect(journal.length === 3, `the journal has ${journal.length} entries`);
      const forbidden = journal[1]!;
      expect(
        forbidden.name === 'x.unknown' &&
          forbidden.outcome === 'error' &&
          (forbidden.error as { code?: string } | null)?.code === 'A-AUTH-FORBIDDEN',
        `the unknown name was journaled as ${JSON.stringify(forbidden).slice(0, 300)}`,
      );
      const fArgs = forbidden.args as Record<string, unknown>;
      expect(
        Object.keys(fArgs).every((k) => k.includes(MARKER)) && Object.values(fArgs).every((v) => String(v).includes(MARKER)),
        `the forbidden call's args were journaled as ${JSON.stringify(fArgs)}`,
      );
      expect(JSON.stringify(journal[2]!.args).includes(MARKER), `kv.get was journaled with args ${JSON.stringify(journal[2]!.args)}`);
      expectClean("the run's records", await runRecords(host, r.run_id!));
      ctx.observe(
        'journal',
        journal.map((e) => ({ name: e.name, args: e.args, outcome: e.outcome })),
      );
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.extism-output',
    title: 'An extism/v1 plugin that outputs the secrets.get answer gets the marker recorded and returned, never the value',
    category: 'secrets',
    abi: ['ABI-SECRET-006', 'ABI-SECRET-007', 'ABI-SECRET-001'],
    engines: ['extism'],
    expected:
      'the plugin forwards secrets.get {name: db_password} to helix_capability_call and outputs the raw answer; the call succeeds with capability_result.result.value "[secret:db_password]"; the journal entry of secrets.get is mode redacted and keyed; no form in the response, the records or the Helix home',
    packs: () => [
      {
        id: 's.extism',
        module: extismForwarder(),
        manifest: { abi: 'extism/v1', entrypoint: 'run', capabilities: { abiVersion: 1, allow: [`secrets.get.${SECRET_NAME}`] } },
      },
    ],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('s.extism', { abi_version: 1, name: 'secrets.get', args: { name: SECRET_NAME } });
      const out = expectSuccess(r) as { capability_result?: { result?: { value?: string } } };
      expect(out.capability_result?.result?.value === MARKER, `the output is ${JSON.stringify(out).slice(0, 300)}`);
      expectClean('the response', JSON.stringify(r));
      const [entry] = readJournal(hostStore(host), r.run_id!);
      expect(
        entry?.name === 'secrets.get' && entry.mode === 'redacted' && entry.result === null && entry.keyed === true,
        `the journal entry: ${JSON.stringify(entry).slice(0, 300)}`,
      );
      expectClean("the run's records", await runRecords(host, r.run_id!));
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.keyed-hashes',
    title: 'Once a run has a secret, its journal hashes and output digest are HMACs under the store key, which never enters the store',
    category: 'secrets',
    abi: ['ABI-SECRET-008'],
    engines: ['helix'],
    expected:
      "secret-hash.key beside helix.mdb is a regular file of 64 hex digits, mode 0600; every journal entry from secrets.get on has keyed: true; the run record's output_sha256 is HMAC-SHA256(key, hex sha256 of the output), not the plain hash; neither the plain sha256 of the secrets.get answer nor of the secret, nor the key, is in the store file",
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, calls: [call('kv.get', { key: 'nothing' })], output: 'no secret here' });
      expectSuccess(r);
      const journal = readJournal(store, r.run_id!);
      expect(
        JSON.stringify(journal.map((e) => [e.name, e.keyed])) ===
          JSON.stringify([
            ['secrets.get', true],
            ['kv.get', true],
          ]),
        `the journal: ${JSON.stringify(journal.map((e) => [e.name, e.mode, e.keyed]))}`,
      );
      const keyFile = path.join(host.home, SECRET_KEY_FILE);
      const st = statSync(keyFile);
      const keyHex = readFileSync(keyFile, 'utf8').trim();
      expect(
        st.isFile() && (st.mode & 0o777) === 0o600 && /^[0-9a-f]{64}$/.test(keyHex),
        `the key file: mode ${(st.mode & 0o777).toString(8)}, ${keyHex.length} characters`,
      );
      expect(path.dirname(keyFile) === path.dirname(host.storePath), 'the key file is not beside the store');
      // The output bytes are the guest's answer envelope, as it wrote them.
      const plainOutput = createHash('sha256')
        .update(JSON.stringify({ status: 'ok', output: r.output }))
        .digest('hex');
      const rec = getRun(store, r.run_id!)!;
      const keyed = createHmac('sha256', Buffer.from(keyHex, 'hex')).update(plainOutput).digest('hex');
      ctx.observe('output_sha256', { recorded: rec.output_sha256, plain: plainOutput, keyed });
      expect(rec.output_sha256 !== plainOutput, 'the run record keeps the plain sha256 of the output');
      expect(rec.output_sha256 === keyed, `output_sha256 ${rec.output_sha256} is not HMAC(key, sha256 hex of the output) ${keyed}`);
      const answer = JSON.stringify({
        status: 'ok',
        abi_version: 1,
        capability_result: { name: 'secrets.get', result: { value: SECRET } },
      });
      const plain = [answer, SECRET].map((t) => createHash('sha256').update(t).digest('hex'));
      await store.flushed();
      const file = readFileSync(host.storePath);
      for (const h of plain) expect(!file.includes(Buffer.from(h)), `a plain hash ${h} is in the store file`);
      expect(!file.includes(Buffer.from(keyHex)) && !file.includes(Buffer.from(keyHex, 'hex')), 'the key is in the store file');
      expect(journal[0]!.response_sha256 !== plain[0], 'the answer is hashed plainly');
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.verify-needs-key',
    title: 'verify of a run that received a secret needs the store key: another key departs at the first entry, no key is refused',
    category: 'secrets',
    abi: ['ABI-SECRET-009', 'ABI-SECRET-008'],
    engines: ['helix'],
    expected:
      'verifyRun matches with the store key and the secret from its file; with another 64-hex key it does not match and the first difference is at seq 0; with the key file gone it refuses with P-PRECOND-VERIFY naming the secret hash key; with the key back it matches again',
    packs: () => [paths()],
    policy: (_e, env) => secretPolicy(env),
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, calls: [call('kv.get', { key: 'x' })], output: 'plain' });
      expectSuccess(r);
      const first = await verifyRun(store, r.run_id!);
      expect(first.match === true, `verify with the key: ${JSON.stringify(first).slice(0, 400)}`);
      const keyFile = path.join(host.home, SECRET_KEY_FILE);
      const saved = path.join(ctx.env.dir, 'key.saved');
      copyFileSync(keyFile, saved);
      ctx.defer(() => copyFileSync(saved, keyFile));
      writeFileSync(keyFile, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
      const other = await verifyRun(store, r.run_id!);
      expect(
        other.match === false && (other.first_difference as { seq?: number } | undefined)?.seq === 0,
        `verify with another key: ${JSON.stringify(other).slice(0, 400)}`,
      );
      rmSync(keyFile);
      let refusal: { code?: string; message?: string } | undefined;
      try {
        await verifyRun(store, r.run_id!);
      } catch (e) {
        refusal = e as { code?: string; message?: string };
      }
      expect(
        refusal?.code === 'P-PRECOND-VERIFY' && /secret hash key/.test(refusal.message ?? ''),
        `verify without the key: ${JSON.stringify(refusal)}`,
      );
      copyFileSync(saved, keyFile);
      const again = await verifyRun(store, r.run_id!);
      expect(again.match === true, 'verify with the key restored does not match');
      ctx.observe('other_key_difference', other.first_difference);
      ctx.observe('no_key_refusal', refusal?.message);
    },
  },
  {
    id: 'secrets.http-request',
    title: 'http.request carries the secret to its allowed origin, while the journal keeps markers for it and for the echoing answer',
    category: 'secrets',
    abi: ['ABI-SECRET-010', 'ABI-SECRET-007', 'ABI-SECRET-001'],
    engines: ['helix'],
    expected:
      "the local upstream receives the secret as written (Basic auth header, percent-encoded URL query, JSON body) and answers it back; the guest gets status 200; the journal entry's args and result hold markers, its hashes are keyed; no form in the response, the records or the Helix home",
    packs: async () => {
      upstream ??= await startUpstream((hit) => `auth=${hit.headers.authorization ?? ''} url=${hit.url}`);
      return [guest('s.http', ['http.request'], { network: [`${upstream.origin}`] })];
    },
    policy: (_e, env) => secretPolicy(env, undefined, { network: { allow: [upstream!.origin], allowPrivate: ['127.0.0.1'] } }),
    async run(ctx) {
      ctx.defer(async () => {
        await upstream?.close();
        upstream = undefined;
      });
      const host = await ctx.host();
      const up = upstream!;
      const r = await ctx.call('s.http', {
        secret: SECRET_NAME,
        calls: [
          call('http.request', {
            method: 'POST',
            url: `${up.origin}/login?token={{pct}}`,
            headers: { authorization: 'Basic {{b64|user:}}' },
            body: '{"password":"{{json}}"}',
          }),
        ],
      });
      expectSuccess(r);
      const a = answersOf(r)[0];
      expect(
        a?.status === 'ok' && a.capability_result?.result.status === 200,
        `http.request was answered ${JSON.stringify(a).slice(0, 300)}`,
      );
      const hit = up.hits.at(-1) as Hit;
      expect(
        hit.headers.authorization === `Basic ${Buffer.from(`user:${SECRET}`).toString('base64')}`,
        'the upstream did not get the Basic header as written',
      );
      expect(new URL(hit.url, up.origin).searchParams.get('token') === SECRET, 'the upstream did not get the token in the URL');
      expect(JSON.parse(hit.body.toString()).password === SECRET, 'the upstream did not get the body as written');
      const entry = readJournal(hostStore(host), r.run_id!)[1]!;
      expect(
        JSON.stringify(entry.args).includes(MARKER) && entry.keyed === true,
        `the journal entry: ${JSON.stringify(entry).slice(0, 400)}`,
      );
      expect(JSON.stringify(entry.result).includes(MARKER), `the journaled answer: ${JSON.stringify(entry.result).slice(0, 300)}`);
      expectClean('the response', JSON.stringify(r));
      expectClean("the run's records", await runRecords(host, r.run_id!));
      ctx.observe('upstream_hits', up.hits.length);
      await scanHome(ctx);
    },
  },
  {
    id: 'secrets.cli-show-export',
    title: 'helix runs show, runs export (RO-Crate) and verify, run as child processes on the store, show no form of the secret',
    category: 'secrets',
    abi: ['ABI-SECRET-001', 'ABI-SECRET-002', 'ABI-SECRET-009'],
    engines: ['helix'],
    expected:
      'after a run that put the secret in its log (Basic auth), its artifact (raw across pieces, base64url), its label (percent) and its output (JSON-escaped), under kv and artifacts: redact, `helix runs show` prints the run with no form; `helix runs export` writes a crate whose every file (metadata and data) holds markers and no form; `helix verify` exits 0; the secret key is not in the crate',
    packs: () => [
      guest('s.writer', ['artifact.write', 'log.emit', 'kv.put'], {
        declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }],
      }),
    ],
    policy: (_e, env) => secretPolicy(env, { kv: 'redact', artifacts: 'redact' }),
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [
          call('log.emit', { event: 'token', fields: { basic: 'Basic {{b64|user:}}' } }),
          call('kv.put', { key: 'k', value: '{{hex}}' }),
          call('artifact.write', { role: 'report', data: 'report for {{raw|||0|12}}', label: 'by {{pct}}' }),
          call('artifact.write', { role: 'report', data: '{{raw|||12|}}\n{{b64url|a}}\n', final: true }),
        ],
        output: 'done with {{json}}',
      });
      expectSuccess(r);
      await hostStore(host).flushed();
      const home = host.home;
      const shown = await helix(['runs', 'show', r.run_id!, '--home', home]);
      expect(shown.code === 0, `helix runs show exited ${shown.code}: ${shown.stderr.slice(0, 400)}`);
      expectClean('helix runs show', shown.stdout + shown.stderr);
      expectMarker('helix runs show', shown.stdout);
      const crate = path.join(ctx.env.dir, 'export', 'crate');
      mkdirSync(path.dirname(crate), { recursive: true });
      const exported = await helix(['runs', 'export', r.run_id!, crate, '--home', home]);
      expect(exported.code === 0, `helix runs export exited ${exported.code}: ${exported.stderr.slice(0, 400)}`);
      const scan = formsInTree(crate);
      ctx.observe('crate_scan', { files: scan.files, bytes: scan.bytes, found: scan.found });
      expect(scan.files >= 2 && scan.found.length === 0, `the crate (${scan.files} files) holds the secret: ${scan.found.join('; ')}`);
      const metadata = readFileSync(path.join(crate, 'ro-crate-metadata.json'), 'utf8');
      expectMarker('the crate metadata', metadata);
      const keyHex = readFileSync(path.join(home, SECRET_KEY_FILE), 'utf8').trim();
      for (const f of readdirSync(crate, { recursive: true }) as string[]) {
        const file = path.join(crate, f);
        if (statSync(file).isFile()) expect(!readFileSync(file).includes(Buffer.from(keyHex)), `the secret hash key is in ${f}`);
      }
      const verified = await helix(['verify', r.run_id!, '--home', home]);
      expect(verified.code === 0, `helix verify exited ${verified.code}: ${(verified.stdout + verified.stderr).slice(0, 400)}`);
      expectClean('helix verify', verified.stdout + verified.stderr);
      ctx.observe('cli', { show_bytes: shown.stdout.length, export: exported.stdout.trim(), verify: verified.stdout.trim().slice(0, 200) });
      await scanHome(ctx);
    },
  },
];

/** The upstream of secrets.http-request, started with its packs and closed when it ends. */
let upstream: Awaited<ReturnType<typeof startUpstream>> | undefined;
