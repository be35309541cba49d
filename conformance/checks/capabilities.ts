// Conformance checks: capabilities. A guest asks the broker for what it was not given (unknown,
// unlisted, ungranted, out-of-scope and privileged names), sends it malformed envelopes, bad
// arguments, oversized payloads and storms of calls, calls from its start function, writes
// outputs it did not declare, and abuses the bulk path's buffers; the host must answer each with
// the exact refusal the ABI names, record every call in a hash chain `verify` can replay, and go
// on serving.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResponseEnvelope } from '../../abi/index.js';
import { getArtifact, importInline, listArtifacts } from '../../host/4-calls/artifacts/index.js';
import { errorAnswer, FORBIDDEN, FORBIDDEN_BYTES } from '../../host/4-calls/broker/answers.js';
import { brokenLink, entryHash, JOURNAL_GENESIS, readJournal } from '../../host/4-calls/broker/journal.js';
import { hostStore, type Host } from '../../host/5-host/host.js';
import { getRun } from '../../host/4-calls/runs/run-store.js';
import { verifyRun } from '../../host/4-calls/runs/verify.js';
import { readAudit } from '../../host/3-store/audit.js';
import { rawDatabases } from '../../host/3-store/raw-access.js';
import { expect, expectOutcome, expectSuccess, type Check, type CheckContext, type CheckEnv, type PackSpec } from '../check.js';
import { checkDefaultPolicy } from '../runner.js';
import { extismForwarder, RAW_BUFFER_BASE, RAW_LIMITS, rawAnswers, rawCallerModule, rawInput, type RawCall } from '../kit/caps-kit.js';
import { numberResultModule, watString } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';

const MiB = 1 << 20;
/** Roomy limits for the AssemblyScript guests. */
const AS_LIMITS = { maxInputBytes: 4_000_000, maxOutputBytes: 4_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 1000 };

interface Answer {
  status: 'ok' | 'error';
  abi_version?: number;
  capability_result?: { name: string; result: any };
  error?: { code: string; message: string; details: any };
}

/** An AssemblyScript script.ts pack. */
function script(id: string, manifest: Record<string, unknown>): PackSpec {
  return { id, module: '', guest: 'script.ts', manifest: { limits: AS_LIMITS, ...manifest } };
}

/** A raw caller pack (helix/v1 WAT); `bulk` for capability ABI 2. */
function raw(
  id: string,
  allow: readonly string[],
  opts: { bulk?: boolean; limits?: Record<string, unknown>; manifest?: Record<string, unknown> } = {},
): PackSpec {
  return {
    id,
    module: rawCallerModule({ bulk: opts.bulk === true }),
    manifest: {
      limits: { ...RAW_LIMITS, ...opts.limits },
      capabilities: { abiVersion: opts.bulk === true ? 2 : 1, allow },
      ...opts.manifest,
    },
  };
}

/** The answers of a script.ts run. */
function answersOf(r: ResponseEnvelope): Answer[] {
  return ((r.output as { answers?: Answer[] } | undefined)?.answers ?? []) as Answer[];
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, args });

/** The run's audit records of capability decisions. */
function capabilityAudit(
  host: Host,
  runId: string,
): Array<{ decision?: string; capability?: string | null; reason?: string; code?: string }> {
  return readAudit(hostStore(host)).filter((a) => a.run_id === runId && a.kind === 'capability') as never;
}

/** A policy: the check's default with these grants (and more fields). */
function policyWith(env: CheckEnv, grants: Record<string, string[]>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...checkDefaultPolicy(env), grants, ...more };
}

/** A secret file for a policy's `secrets` source, written when the policy is. */
function secretFile(env: CheckEnv, value: string): string {
  const file = path.join(env.dir, 'db_password.secret');
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return file;
}

async function stored(ctx: CheckContext, bytes: Uint8Array, type = 'binary'): Promise<string> {
  return (await importInline(hostStore(await ctx.host()), bytes, { type, maxBytes: 1 << 30 })).id;
}

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

const BASE_GRANTS = ['clock.*', 'log.*', 'kv.*', 'artifact.*'];

/** Names that must all be refused with the same bytes, and why each is refused. */
const REFUSED_NAMES: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ['no.such_thing', {}, 'unknown'],
  ['kv.put', { key: 'k', value: 1 }, 'granted by the policy, not allowlisted'],
  ['secrets.get', { name: 'api_token' }, 'scope not allowlisted'],
  ['docker.run', { image: 'sha256:' + '0'.repeat(64), argv: ['id'] }, 'privileged, not allowlisted or granted'],
  ['slurm.submit', { argv: ['id'] }, 'privileged, not allowlisted or granted'],
  ['CLOCK.NOW_UNIX', {}, 'case-folded allowlisted name'],
  ['clock.now_unix ', {}, 'allowlisted name with a trailing space'],
  ['clock.now_unix.x', {}, 'allowlisted name with a suffix'],
  ['clock.*', {}, 'a pattern'],
  ['../../etc/passwd', {}, 'a path'],
  ['x'.repeat(200), {}, 'a 200-character name (the longest the envelope allows)'],
];

export const capabilityChecks: readonly Check[] = [
  {
    id: 'capabilities.forbidden-same-bytes',
    title: 'Every name that is not allowlisted and granted gets byte-identical `forbidden` answers',
    category: 'capabilities',
    abi: ['ABI-CAP-002'],
    engines: ['helix', 'extism'],
    expected: `each of ${REFUSED_NAMES.length} refused names (unknown, granted but unlisted, wrong secret scope, docker.run, slurm.submit, case and suffix variants, a pattern, a path, a long name) is answered with exactly the bytes of A-AUTH-FORBIDDEN "forbidden", the audit records the different reasons, and the allowlisted clock.now_unix is still answered ok`,
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'cap.forward',
            module: extismForwarder(),
            manifest: {
              abi: 'extism/v1',
              entrypoint: 'run',
              capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'secrets.get.db_password'] },
            },
          }
        : raw('cap.raw', ['clock.now_unix', 'secrets.get.db_password']),
    ],
    policy: (_e, env) =>
      policyWith(
        env,
        { '*': BASE_GRANTS, 'cap.*': ['secrets.get.db_password'] },
        { secrets: { db_password: { file: secretFile(env, 'not-used-here') } } },
      ),
    async run(ctx) {
      const host = await ctx.host();
      const expectedText = Buffer.from(FORBIDDEN_BYTES).toString('utf8');
      ctx.observe('forbidden_bytes', expectedText);
      const reasons = new Map<string, string>();
      if (ctx.engine.name === 'extism') {
        for (const [name, args, why] of REFUSED_NAMES) {
          const r = await ctx.call('cap.forward', { abi_version: 1, name, args });
          const out = expectSuccess(r);
          expect(
            JSON.stringify(out) === expectedText,
            `${name} (${why}) was answered ${JSON.stringify(out).slice(0, 300)}, not ${expectedText}`,
          );
          for (const a of capabilityAudit(host, r.run_id!)) reasons.set(why, a.reason ?? '');
        }
        const ok = expectSuccess(await ctx.call('cap.forward', { abi_version: 1, name: 'clock.now_unix', args: {} }));
        expect(ok.status === 'ok', `clock.now_unix was not answered ok: ${JSON.stringify(ok)}`);
      } else {
        const calls: RawCall[] = [
          ...REFUSED_NAMES.map(([name, args]) => ({ request: { abi_version: 1, name, args } })),
          { request: { abi_version: 1, name: 'clock.now_unix', args: {} } },
        ];
        const r = await ctx.call('cap.raw', rawInput(calls));
        const answers = rawAnswers(r);
        for (const [i, [name, , why]] of REFUSED_NAMES.entries()) {
          expect(
            Buffer.compare(answers[i]!.bytes, Buffer.from(FORBIDDEN_BYTES)) === 0,
            `${name.slice(0, 40)} (${why}) was answered ${answers[i]!.text.slice(0, 300)}, not the forbidden bytes`,
          );
        }
        expect(answers.at(-1)!.json.status === 'ok', `clock.now_unix after the refusals was answered ${answers.at(-1)!.text}`);
        const audit = capabilityAudit(host, r.run_id!);
        for (const [i, [, , why]] of REFUSED_NAMES.entries()) reasons.set(why, audit[i]?.reason ?? '');
        ctx.observe('distinct_answers', new Set(answers.slice(0, -1).map((a) => a.text)).size);
      }
      ctx.observe('audit_reasons', Object.fromEntries(reasons));
      expect(
        new Set(reasons.values()).size >= 3,
        `the audit does not tell the reasons apart: ${JSON.stringify(Object.fromEntries(reasons))}`,
      );
    },
  },
  {
    id: 'capabilities.terminal-call-forbidden',
    title: 'A terminal capability_call output naming an unlisted or privileged capability is refused',
    category: 'capabilities',
    abi: ['ABI-CAP-002'],
    engines: ['helix'],
    expected:
      'a guest answering {"status":"capability_call"} for http.request, docker.run or an unknown name ends terminal_error A-AUTH-FORBIDDEN; one for its allowlisted clock.now_unix succeeds with the clock as output',
    packs: () => [script('cap.terminal', { capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } })],
    async run(ctx) {
      for (const name of ['http.request', 'docker.run', 'slurm.submit', 'no.such_thing']) {
        const r = await ctx.call('cap.terminal', { terminal: call(name, name === 'http.request' ? { url: 'https://example.org' } : {}) });
        expectOutcome(r, 'terminal_error', 'A-AUTH-FORBIDDEN');
        expect(r.error!.message === 'forbidden', `the refusal of ${name} says ${r.error!.message}`);
      }
      const ok = expectSuccess(await ctx.call('cap.terminal', { terminal: call('clock.now_unix') }));
      expect(typeof ok.unix_ms === 'number', `the terminal clock call gave ${JSON.stringify(ok)}`);
    },
  },
  {
    id: 'capabilities.unknown-allow-entry',
    title: 'A manifest allowlisting a capability the host does not provide is refused at load',
    category: 'capabilities',
    abi: ['ABI-CAP-002'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-MANIFEST-INVALID naming capabilities.allow and the unknown name',
    packs: () => [raw('cap.unknown_allow', ['clock.now_unix', 'net.raw_socket'])],
    async run(ctx) {
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}`);
      const text = JSON.stringify(refusal.details);
      expect(
        text.includes('net.raw_socket') && text.includes('capabilities.allow'),
        `the refusal does not name the entry: ${text.slice(0, 500)}`,
      );
      ctx.observe('violations', refusal.details.violations);
    },
  },
  {
    id: 'capabilities.bare-scoped-name',
    title: 'A manifest allowlisting the bare scoped name secrets.get (every secret) is refused at load',
    category: 'capabilities',
    abi: ['ABI-CAP-004'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-MANIFEST-INVALID saying secrets.get must name the secret it grants',
    packs: () => [raw('cap.bare_secrets', ['secrets.get'])],
    policy: (_e, env) =>
      policyWith(
        env,
        { '*': [...BASE_GRANTS, 'secrets.get', 'secrets.get.db_password'] },
        { secrets: { db_password: { file: secretFile(env, 'bare-scope-secret') } } },
      ),
    async run(ctx) {
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}`);
      const text = JSON.stringify(refusal.details);
      expect(text.includes('secrets.get must name what it grants'), `the refusal does not explain the bare scope: ${text.slice(0, 500)}`);
      ctx.observe('violations', refusal.details.violations);
    },
  },
  {
    id: 'capabilities.secret-scope',
    title: 'secrets.get.db_password reaches exactly that secret; every other name is forbidden or malformed',
    category: 'capabilities',
    abi: ['ABI-CAP-004', 'ABI-CAP-005'],
    engines: ['helix'],
    expected:
      'secrets.get {name: db_password} is answered ok (the output shows the marker, not the value); api_token (defined in the policy, not allowlisted) gets the forbidden bytes; DB_PASSWORD, "db_password/../api_token" and an extra argument get I-REQ-CAPABILITY-ARGS; a tool allowlisting secrets.get.api_token that the policy does not grant is refused with A-AUTH-CAPABILITY-NOT-GRANTED before it runs',
    packs: () => [
      script('cap.scoped', { capabilities: { abiVersion: 1, allow: ['secrets.get.db_password'] } }),
      script('cap.greedy', { capabilities: { abiVersion: 1, allow: ['secrets.get.api_token'] } }),
    ],
    policy: (_e, env) => {
      const file = secretFile(env, 'db-scope-value-123456');
      const other = path.join(env.dir, 'api_token.secret');
      writeFileSync(other, 'api-token-value-987654\n', { mode: 0o600 });
      return policyWith(
        env,
        { '*': BASE_GRANTS, 'cap.scoped': ['secrets.get.db_password'] },
        { secrets: { db_password: { file }, api_token: { file: other } } },
      );
    },
    async run(ctx) {
      const get = (name: unknown, extra: Record<string, unknown> = {}) => call('secrets.get', { name, ...extra });
      const r = await ctx.call('cap.scoped', {
        calls: [
          get('db_password'),
          get('api_token'),
          get('DB_PASSWORD'),
          get('db_password/../api_token'),
          get('db_password', { scope: 'api_token' }),
        ],
      });
      expectSuccess(r);
      const a = answersOf(r);
      // The guest received the value; the recorded and returned output shows the marker in its place.
      expect(
        a[0]!.status === 'ok' && a[0]!.capability_result!.result.value === '[secret:db_password]',
        `db_password was answered ${JSON.stringify(a[0])}`,
      );
      expect(JSON.stringify(a[1]) === Buffer.from(FORBIDDEN_BYTES).toString(), `api_token was answered ${JSON.stringify(a[1])}`);
      for (const i of [2, 3, 4]) expect(a[i]!.error?.code === 'I-REQ-CAPABILITY-ARGS', `answer ${i} was ${JSON.stringify(a[i])}`);
      const out = JSON.stringify(r.output);
      expect(!out.includes('api-token-value') && !out.includes('db-scope-value'), 'a secret value reached the output');
      ctx.observe(
        'answers',
        a.map((x) => x.error?.code ?? x.status),
      );
      const greedy = await ctx.call('cap.greedy', { calls: [get('api_token')] });
      expectOutcome(greedy, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      expect(
        JSON.stringify(greedy.error!.details).includes('secrets.get.api_token'),
        `the refusal does not name the entry: ${JSON.stringify(greedy.error)}`,
      );
    },
  },
  {
    id: 'capabilities.listed-not-granted',
    title: 'A tool allowlisting a capability the policy does not grant is refused before it runs',
    category: 'capabilities',
    abi: ['ABI-CAP-002'],
    engines: ['helix', 'extism'],
    expected:
      'the call ends terminal_error A-AUTH-CAPABILITY-NOT-GRANTED naming kv.put; the guest never ran (no journal entry, no capability audit); a tool of the same module granted what it lists is served',
    packs: (engine) =>
      engine.name === 'extism'
        ? [
            {
              id: 'cap.ungranted',
              module: extismForwarder(),
              manifest: { abi: 'extism/v1', entrypoint: 'run', capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'kv.put'] } },
            },
            {
              id: 'cap.granted',
              module: extismForwarder(),
              manifest: { abi: 'extism/v1', entrypoint: 'run', capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
            },
          ]
        : [raw('cap.ungranted', ['clock.now_unix', 'kv.put']), raw('cap.granted', ['clock.now_unix'])],
    policy: (_e, env) => policyWith(env, { '*': ['clock.*'] }),
    async run(ctx) {
      const host = await ctx.host();
      const request = { abi_version: 1, name: 'kv.put', args: { key: 'k', value: 1 } };
      const r = await ctx.call('cap.ungranted', ctx.engine.name === 'extism' ? request : rawInput([{ request }]));
      expectOutcome(r, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      expect(JSON.stringify(r.error!.details.capabilities) === '["kv.put"]', `the refusal names ${JSON.stringify(r.error!.details)}`);
      if (r.run_id !== null && r.run_id !== undefined) {
        expect(readJournal(hostStore(host), r.run_id).length === 0, 'the refused tool made capability calls');
      }
      ctx.observe('run_id', r.run_id ?? null);
      const clock = { abi_version: 1, name: 'clock.now_unix', args: {} };
      expectSuccess(await ctx.call('cap.granted', ctx.engine.name === 'extism' ? clock : rawInput([{ request: clock }])));
    },
  },
  {
    id: 'capabilities.privileged-without-grant',
    title: 'docker.run and slurm.submit in a manifest are refused without an exact grant; wildcards do not grant them',
    category: 'capabilities',
    abi: ['ABI-CAP-004', 'ABI-CAP-002'],
    engines: ['helix'],
    expected:
      'with grants "*": [..., "docker.*", "slurm.*"] and "cap.*": ["docker.*", "slurm.*"], a tool listing docker.run and one listing slurm.submit end terminal_error A-AUTH-CAPABILITY-NOT-GRANTED naming them, before running; a tool without them that calls docker.run and slurm.submit gets the forbidden bytes',
    packs: () => [
      raw('cap.docker', ['docker.run']),
      raw('cap.slurm', ['slurm.submit', 'slurm.status']),
      raw('cap.sneaky', ['clock.now_unix']),
    ],
    policy: (_e, env) => policyWith(env, { '*': [...BASE_GRANTS, 'docker.*', 'slurm.*'], 'cap.*': ['docker.*', 'slurm.*'] }),
    async run(ctx) {
      const docker = { abi_version: 1, name: 'docker.run', args: { image: `sha256:${'a'.repeat(64)}`, argv: ['sh', '-c', 'id'] } };
      const slurm = { abi_version: 1, name: 'slurm.submit', args: { argv: ['id'] } };
      const d = await ctx.call('cap.docker', rawInput([{ request: docker }]));
      expectOutcome(d, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      expect(JSON.stringify(d.error!.details).includes('docker.run'), `the refusal does not name docker.run: ${JSON.stringify(d.error)}`);
      const s = await ctx.call('cap.slurm', rawInput([{ request: slurm }]));
      expectOutcome(s, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      expect(
        JSON.stringify(s.error!.details).includes('slurm.submit'),
        `the refusal does not name slurm.submit: ${JSON.stringify(s.error)}`,
      );
      const sneaky = rawAnswers(await ctx.call('cap.sneaky', rawInput([{ request: docker }, { request: slurm }])));
      for (const a of sneaky)
        expect(Buffer.compare(a.bytes, Buffer.from(FORBIDDEN_BYTES)) === 0, `an unlisted privileged call was answered ${a.text}`);
      ctx.observe('refusals', { docker: d.error!.message, slurm: s.error!.message });
    },
  },
  {
    id: 'capabilities.json-bounds-before-name',
    title: 'JSON bounds are checked before the name: an unknown and an allowlisted name get the same answer or the same abort',
    category: 'capabilities',
    abi: ['ABI-CAP-002', 'ABI-CAP-001', 'ABI-JSON-006'],
    engines: ['helix'],
    expected:
      'a request carrying the integer 2^53+1 is answered with the same bytes whether it names no.such_thing or the allowlisted kv.get; a request nested 100 deep ends the run S-TOOL-CAPABILITY-DEPTH for either name, the journal keeping the abort with args null',
    packs: () => [raw('cap.raw', ['kv.get', 'clock.now_unix'])],
    async run(ctx) {
      const host = await ctx.host();
      const huge = (name: string) => `{"abi_version":1,"name":"${name}","args":{"key":"k","n":9007199254740993}}`;
      const a = rawAnswers(
        await ctx.call(
          'cap.raw',
          rawInput([
            { request: huge('no.such_thing') },
            { request: huge('kv.get') },
            { request: { abi_version: 1, name: 'clock.now_unix', args: {} } },
          ]),
        ),
      );
      expect(
        Buffer.compare(a[0]!.bytes, a[1]!.bytes) === 0,
        `the answers differ by name: ${a[0]!.text.slice(0, 200)} / ${a[1]!.text.slice(0, 200)}`,
      );
      expect(
        a[0]!.json.status === 'error' && a[0]!.json.error?.code !== 'A-AUTH-FORBIDDEN',
        `an out-of-bounds number was answered ${a[0]!.text.slice(0, 300)}`,
      );
      expect(a[2]!.json.status === 'ok', 'the guest could not go on after the bounds refusal');
      ctx.observe('bounds_answer', a[0]!.text.slice(0, 300));
      const deep = (name: string) => `{"abi_version":1,"name":"${name}","args":{"key":${'['.repeat(100)}${']'.repeat(100)}}}`;
      const codes: Record<string, unknown> = {};
      for (const name of ['no.such_thing', 'kv.get']) {
        const r = await ctx.call(
          'cap.raw',
          rawInput([{ request: deep(name) }, { request: { abi_version: 1, name: 'clock.now_unix', args: {} } }]),
        );
        expectOutcome(r, 'terminal_error', 'S-TOOL-CAPABILITY-DEPTH');
        const journal = readJournal(hostStore(host), r.run_id!);
        expect(
          journal.length === 1 && journal[0]!.outcome === 'abort' && journal[0]!.args === null,
          `${name}: the journal keeps ${JSON.stringify(journal.map((e) => [e.name, e.outcome, e.args]))}`,
        );
        codes[name] = r.error!.code;
      }
      ctx.observe('depth_codes', codes);
    },
  },
  {
    id: 'capabilities.malformed-envelope',
    title:
      'Malformed capability requests (not UTF-8, not JSON, wrong shape, bad abi_version) are answered I-REQ-ENVELOPE and the guest goes on',
    category: 'capabilities',
    abi: ['ABI-CAP-001'],
    engines: ['helix', 'extism'],
    expected:
      'each malformed request gets {"status":"error","abi_version":1,"error":{"code":"I-REQ-ENVELOPE"}} in the guest\'s memory; an abi_version 2 request on the text import is answered with abi_version 2; a later well-formed clock.now_unix call is answered ok',
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'cap.forward',
            module: extismForwarder(),
            manifest: { abi: 'extism/v1', entrypoint: 'run', capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
          }
        : raw('cap.raw', ['clock.now_unix']),
    ],
    async run(ctx) {
      const bad: Array<[string, unknown]> = [
        ['invalid UTF-8', new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])],
        ['not JSON', 'clock.now_unix please'],
        ['an array', '[1,2,3]'],
        ['no abi_version', { name: 'clock.now_unix', args: {} }],
        ['abi_version 3', { abi_version: 3, name: 'clock.now_unix', args: {} }],
        ['no name', { abi_version: 1, args: {} }],
        ['a number for a name', { abi_version: 1, name: 7, args: {} }],
        ['an unknown key', { abi_version: 1, name: 'clock.now_unix', args: {}, sudo: true }],
        ['empty', ''],
        ['a 201-character name', { abi_version: 1, name: 'x'.repeat(201), args: {} }],
      ];
      if (ctx.engine.name === 'extism') {
        // The plugin's input is JSON (the host checks it); the envelope errors that JSON can carry.
        for (const [what, req] of bad.filter(([, r]) => typeof r === 'object' && !(r instanceof Uint8Array))) {
          const out = expectSuccess(await ctx.call('cap.forward', req));
          expect(
            (out.error as { code?: string } | undefined)?.code === 'I-REQ-ENVELOPE' && out.abi_version === 1,
            `${what} was answered ${JSON.stringify(out)}`,
          );
        }
        const ok = expectSuccess(await ctx.call('cap.forward', { abi_version: 2, name: 'clock.now_unix', args: {} }));
        expect(ok.status === 'ok' && ok.abi_version === 2, `an abi_version 2 request was answered ${JSON.stringify(ok)}`);
        return;
      }
      const calls: RawCall[] = [
        ...bad.map(([, request]) => ({ request })),
        { request: { abi_version: 2, name: 'clock.now_unix', args: {} } },
        { request: { abi_version: 1, name: 'clock.now_unix', args: {} } },
      ];
      const answers = rawAnswers(await ctx.call('cap.raw', rawInput(calls)));
      for (const [i, [what]] of bad.entries()) {
        const a = answers[i]!.json;
        expect(
          a.status === 'error' && a.error?.code === 'I-REQ-ENVELOPE' && a.abi_version === 1,
          `${what} was answered ${answers[i]!.text.slice(0, 300)}`,
        );
      }
      const v2 = answers[bad.length]!.json;
      expect(v2.status === 'ok' && v2.abi_version === 2, `an abi_version 2 request was answered ${answers[bad.length]!.text}`);
      expect(
        answers.at(-1)!.json.status === 'ok' && answers.at(-1)!.json.abi_version === 1,
        `the well-formed call after them was answered ${answers.at(-1)!.text}`,
      );
      ctx.observe('messages', Object.fromEntries(bad.map(([what], i) => [what, answers[i]!.json.error?.message.slice(0, 160)])));
    },
  },
  {
    id: 'capabilities.argument-violations',
    title: "Arguments that break a capability's schema are answered I-REQ-CAPABILITY-ARGS listing every violation",
    category: 'capabilities',
    abi: ['ABI-CAP-005'],
    engines: ['helix', 'extism'],
    expected:
      'kv.put {key:"", surprise:1} lists at least 3 violations (key, value, surprise); a kv key over 256 bytes, artifact.read with a negative offset and a non-string id, log.emit with an unknown level, and args that are not an object are each refused with I-REQ-CAPABILITY-ARGS or I-REQ-ENVELOPE; nothing is stored; the guest goes on',
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'cap.forward',
            module: extismForwarder(),
            manifest: { abi: 'extism/v1', entrypoint: 'run', capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.list'] } },
          }
        : raw('cap.raw', ['kv.put', 'kv.get', 'kv.list', 'artifact.read', 'log.emit']),
    ],
    async run(ctx) {
      const multi = { abi_version: 1, name: 'kv.put', args: { key: '', surprise: 1 } };
      if (ctx.engine.name === 'extism') {
        const out = expectSuccess(await ctx.call('cap.forward', multi)) as { error?: { code: string; details: { violations: unknown[] } } };
        expect(
          out.error?.code === 'I-REQ-CAPABILITY-ARGS' && out.error.details.violations.length >= 3,
          `kv.put {key:"",surprise:1} was answered ${JSON.stringify(out)}`,
        );
        ctx.observe('violations', out.error.details.violations);
        const list = expectSuccess(await ctx.call('cap.forward', { abi_version: 1, name: 'kv.list', args: {} })) as {
          capability_result?: { result: { keys: string[] } };
        };
        expect(list.capability_result?.result.keys.length === 0, `something was stored: ${JSON.stringify(list)}`);
        return;
      }
      const calls: Array<[string, unknown, string[]]> = [
        ['kv.put missing value, empty key, unknown key', multi, ['I-REQ-CAPABILITY-ARGS']],
        ['kv.get key of 300 bytes', { abi_version: 1, name: 'kv.get', args: { key: 'k'.repeat(300) } }, ['I-REQ-CAPABILITY-ARGS']],
        [
          'artifact.read negative offset, numeric id',
          { abi_version: 1, name: 'artifact.read', args: { artifact_id: 5, offset: -1 } },
          ['I-REQ-CAPABILITY-ARGS'],
        ],
        [
          'log.emit unknown level, numeric event',
          { abi_version: 1, name: 'log.emit', args: { level: 'shout', event: 3 } },
          ['I-REQ-CAPABILITY-ARGS'],
        ],
        ['args an array', { abi_version: 1, name: 'kv.put', args: [1, 2] }, ['I-REQ-CAPABILITY-ARGS', 'I-REQ-ENVELOPE']],
        ['args a string', { abi_version: 1, name: 'kv.put', args: 'key=value' }, ['I-REQ-CAPABILITY-ARGS', 'I-REQ-ENVELOPE']],
      ];
      const answers = rawAnswers(
        await ctx.call(
          'cap.raw',
          rawInput([...calls.map(([, request]) => ({ request })), { request: { abi_version: 1, name: 'kv.list', args: {} } }]),
        ),
      );
      const seen: Record<string, unknown> = {};
      for (const [i, [what, , codes]] of calls.entries()) {
        const a = answers[i]!.json;
        expect(a.status === 'error' && codes.includes(a.error!.code), `${what} was answered ${answers[i]!.text.slice(0, 300)}`);
        seen[what] = a.error!.details?.violations ?? a.error!.message;
      }
      const first = answers[0]!.json.error!.details.violations as Array<{ path: string }>;
      expect(first.length >= 3, `only ${first.length} violations were listed for kv.put: ${JSON.stringify(first)}`);
      expect(
        JSON.stringify(answers.at(-1)!.json.capability_result?.result) === '{"keys":[]}',
        `a refused put was stored: ${answers.at(-1)!.text}`,
      );
      ctx.observe('violations', seen);
    },
  },
  {
    id: 'capabilities.payload-bounds',
    title: 'A capability request over 1.5 MB is answered R-CAP-PAYLOAD, and the guest goes on',
    category: 'capabilities',
    abi: ['ABI-CAP-005'],
    engines: ['helix', 'extism'],
    expected:
      'log.emit with a 1.6 MB field is answered R-CAP-PAYLOAD (max_bytes 1500000) and not logged; on helix a kv.put of a 70 kB value is I-REQ-CAPABILITY-ARGS and the next clock.now_unix call is answered ok; the run succeeds',
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'cap.big',
            module: extismForwarder(),
            manifest: {
              abi: 'extism/v1',
              entrypoint: 'run',
              limits: { ...DEFAULT_LIMITS, maxInputBytes: 4_000_000, maxMemoryPages: 1024 },
              capabilities: { abiVersion: 1, allow: ['log.emit'] },
            },
          }
        : script('cap.big', { capabilities: { abiVersion: 1, allow: ['log.emit', 'kv.put', 'clock.now_unix'] } }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const pad = { event: 'huge', fields: { pad: 'y'.repeat(1_600_000) } };
      if (ctx.engine.name === 'extism') {
        const r = await ctx.call('cap.big', { abi_version: 1, name: 'log.emit', args: pad });
        const out = expectSuccess(r) as { error?: { code: string; details: { max_bytes?: number } } };
        expect(
          out.error?.code === 'R-CAP-PAYLOAD' && out.error.details.max_bytes === 1_500_000,
          `the 1.6 MB request was answered ${JSON.stringify(out).slice(0, 300)}`,
        );
        expect(
          readAudit(hostStore(host)).filter((a) => a.run_id === r.run_id && a.kind === 'log').length === 0,
          'the oversized line was logged',
        );
        return;
      }
      const r = await ctx.call('cap.big', {
        calls: [call('log.emit', pad), call('kv.put', { key: 'big', value: 'x'.repeat(70_000) }), call('clock.now_unix')],
      });
      expectSuccess(r);
      const [huge, big, clock] = answersOf(r);
      expect(
        huge?.error?.code === 'R-CAP-PAYLOAD' && huge.error.details.max_bytes === 1_500_000,
        `the 1.6 MB request was answered ${JSON.stringify(huge).slice(0, 300)}`,
      );
      expect(big?.error?.code === 'I-REQ-CAPABILITY-ARGS', `the 70 kB value was answered ${JSON.stringify(big).slice(0, 300)}`);
      expect(clock?.status === 'ok', `the call after them was answered ${JSON.stringify(clock)}`);
      const logged = readAudit(hostStore(host)).filter((a) => a.run_id === r.run_id && a.kind === 'log');
      expect(logged.length === 0, 'the oversized line was logged');
      ctx.observe('payload_error', huge!.error!.message);
    },
  },
  {
    id: 'capabilities.call-ceiling-storm',
    title: 'A guest looping capability calls without end is stopped at maxCapabilityCalls with R-CAP-CALL-LIMIT',
    category: 'capabilities',
    abi: ['ABI-CAP-003'],
    engines: ['helix', 'extism'],
    expected:
      'with maxCapabilityCalls 5 the run ends terminal_error R-CAP-CALL-LIMIT (details.max_capability_calls 5) within 5 s; the journal holds 5 served calls and one abort, nothing after',
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'cap.storm',
            module: extismForwarder(1_000_000),
            manifest: {
              abi: 'extism/v1',
              entrypoint: 'run',
              limits: { ...DEFAULT_LIMITS, maxCapabilityCalls: 5 },
              capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
            },
          }
        : script('cap.storm', {
            limits: { ...AS_LIMITS, maxCapabilityCalls: 5 },
            capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
          }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const t0 = performance.now();
      const r = await ctx.call(
        'cap.storm',
        ctx.engine.name === 'extism' ? { abi_version: 1, name: 'clock.now_unix', args: {} } : { storm: 'clock.now_unix' },
      );
      const ms = performance.now() - t0;
      expectOutcome(r, 'terminal_error', 'R-CAP-CALL-LIMIT');
      expect(r.error!.details.max_capability_calls === 5, `details: ${JSON.stringify(r.error!.details)}`);
      expect(ms < 5000, `the storm took ${Math.round(ms)} ms to stop`);
      const journal = readJournal(hostStore(host), r.run_id!);
      expect(
        journal.length === 6 && journal.slice(0, 5).every((e) => e.outcome === 'ok') && journal[5]!.outcome === 'abort',
        `journal: ${JSON.stringify(journal.map((e) => e.outcome))}`,
      );
      ctx.observe(
        'journal_outcomes',
        journal.map((e) => e.outcome),
      );
      ctx.observe('stopped_after_ms', Math.round(ms));
    },
  },
  {
    id: 'capabilities.fuel-per-call',
    title: 'Capability calls cost 1000 fuel plus one per 64 bytes, so a storm under a large call ceiling runs out of fuel',
    category: 'capabilities',
    abi: ['ABI-CAP-006'],
    engines: ['helix'],
    expected:
      "each journal entry's fuel is 1000 + ceil((request bytes + answer bytes) / 64), computed from the exact bytes the guest sent and received; five calls cost at least 4000 more fuel than one; a storm with maxCapabilityCalls 100000 and fuel 3000000 ends S-TOOL-FUEL-EXHAUSTED after at most 3000 calls",
    packs: () => [
      raw('cap.raw', ['clock.now_unix', 'kv.get']),
      script('cap.fuel_storm', {
        limits: { ...AS_LIMITS, fuel: 3_000_000, maxCapabilityCalls: 100_000 },
        timeoutMs: 30_000,
        capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const clock = { request: { abi_version: 1, name: 'clock.now_unix', args: {} } };
      const big = { request: { abi_version: 1, name: 'kv.get', args: { key: 'q'.repeat(250) } } };
      const one = await ctx.call('cap.raw', rawInput([clock]));
      const five = await ctx.call('cap.raw', rawInput([clock, clock, clock, clock, big]));
      const answers = rawAnswers(five);
      const journal = readJournal(hostStore(host), five.run_id!);
      const requests = [clock, clock, clock, clock, big].map((c) => Buffer.from(JSON.stringify(c.request)));
      for (const [i, e] of journal.entries()) {
        const want = 1000 + Math.ceil((requests[i]!.length + answers[i]!.bytes.length) / 64);
        expect(e.fuel === want, `entry ${i} was charged ${e.fuel}, not ${want}`);
      }
      const delta = five.metrics.fuel_used - one.metrics.fuel_used;
      expect(delta >= 4000, `five calls cost only ${delta} fuel more than one`);
      ctx.observe('fuel', { one: one.metrics.fuel_used, five: five.metrics.fuel_used, entries: journal.map((e) => e.fuel) });
      const storm = await ctx.call('cap.fuel_storm', { storm: 'clock.now_unix' });
      expectOutcome(storm, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      const served = readJournal(hostStore(host), storm.run_id!).length;
      expect(served <= 3000, `the storm made ${served} calls under 3000000 fuel`);
      ctx.observe('storm_calls_before_fuel_ran_out', served);
    },
  },
  {
    id: 'capabilities.journal-chain-verify',
    title: 'Every call is journaled in a hash chain; verify replays the run, and catches a tampered or re-chained entry',
    category: 'capabilities',
    abi: ['ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'the journal lists every call (served, refused and invalid) in order with an unbroken chain ending at the run record\'s head; verifyRun matches even after the kv value changes; an edited result fails the chain check, and an edit whose chain and head were recomputed fails as "does not hash to what the guest received"',
    packs: () => [
      script('cap.journal', {
        capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'kv.put', 'kv.get', 'artifact.read', 'log.emit'] },
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const art = await stored(ctx, new TextEncoder().encode(`>r1\n${'ACGT'.repeat(500)}\n`), 'fasta');
      const r = await ctx.call('cap.journal', {
        calls: [
          call('clock.now_unix'),
          call('kv.put', { key: 'v', value: 1 }),
          call('kv.get', { key: 'v' }),
          call('artifact.read', { artifact_id: art, length: 100 }),
          call('log.emit', { event: 'done' }),
          call('nope.nope'),
          call('kv.put', { key: '' }),
        ],
      });
      expectSuccess(r);
      const journal = readJournal(store, r.run_id!);
      const names = journal.map((e) => `${e.name}:${e.outcome}`);
      expect(
        JSON.stringify(names) ===
          JSON.stringify([
            'clock.now_unix:ok',
            'kv.put:ok',
            'kv.get:ok',
            'artifact.read:ok',
            'log.emit:ok',
            'nope.nope:error',
            'kv.put:error',
          ]),
        `journal: ${JSON.stringify(names)}`,
      );
      const run = getRun(store, r.run_id!)!;
      expect(run.journal.entries === 7 && run.journal.head === journal[6]!.hash, `the run record names ${JSON.stringify(run.journal)}`);
      expect(brokenLink(journal, run.journal.head) === undefined, 'the chain is broken as written');
      expect(
        journal[3]!.mode === 'digest' && journal[3]!.result === null && typeof journal[3]!.result_sha256 === 'string',
        'artifact.read is not journaled by digest',
      );
      await ctx.call('cap.journal', { calls: [call('kv.put', { key: 'v', value: 2 })] });
      const clean = await verifyRun(store, r.run_id!);
      expect(clean.match === true, `verify of the untouched run: ${JSON.stringify(clean).slice(0, 500)}`);
      // Tamper: the clock's answer.
      const edited = { ...journal[0]!, result: { unix_ms: 1, unix_s: 0 } };
      await rawDatabases(store).journal.put([r.run_id!, 0], edited as never);
      const plain = await verifyRun(store, r.run_id!);
      expect(
        plain.match === false && plain.checks.some((c) => c.check === 'journal hash chain' && !c.ok),
        `an edited entry passed: ${JSON.stringify(plain).slice(0, 500)}`,
      );
      // A forger recomputes every hash from the edit on, and the run's head.
      let prev = JOURNAL_GENESIS;
      const chained = journal.map((e, i) => {
        const { hash: _h, ...body } = i === 0 ? edited : e;
        const hash = entryHash(prev, body as never);
        prev = hash;
        return { ...body, hash };
      });
      for (const [i, e] of chained.entries()) await rawDatabases(store).journal.put([r.run_id!, i], e as never);
      await rawDatabases(store).runs.put(r.run_id!, { ...run, journal: { entries: 7, head: chained[6]!.hash } } as never);
      const forged = await verifyRun(store, r.run_id!);
      expect(forged.match === false, `a re-chained forgery passed verify: ${JSON.stringify(forged).slice(0, 500)}`);
      ctx.observe('forged_difference', forged.first_difference);
      ctx.observe(
        'chain_check',
        plain.checks.find((c) => c.check === 'journal hash chain'),
      );
    },
  },
  {
    id: 'capabilities.declared-outputs',
    title:
      'artifact.write only reaches declared roles; a run that does not seal exactly its declared outputs fails, and its pieces never become visible',
    category: 'capabilities',
    abi: ['ABI-CAP-008', 'ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'writes to an undeclared role and to the reserved role "log" are refused (C-CONTRACT-OUTPUT-ROLE); artifact.list inside the run, after the output was sealed, does not show it; the run succeeds with one output linked to it; the journal keeps each piece as data_length only; a run writing nothing, one never sealing, and one with the wrong type fail C-CONTRACT-DECLARED-OUTPUTS naming the problem, and leave no artifact behind',
    packs: () => [
      script('cap.writer', {
        capabilities: { abiVersion: 1, allow: ['artifact.write', 'artifact.read', 'artifact.list'] },
        declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }],
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const before = listArtifacts(store).length;
      const r = await ctx.call('cap.writer', {
        calls: [
          call('artifact.write', { role: 'report', data: 'line 1\n' }),
          call('artifact.write', { role: 'extra', data: 'x', final: true }),
          call('artifact.write', { role: 'log', data: 'forged log line\n', final: true }),
          call('artifact.write', { role: 'report', data: 'line 2\n', final: true }),
          call('artifact.list', {}),
        ],
      });
      expectSuccess(r);
      const a = answersOf(r);
      const sealed = a[3]!.capability_result!.result as { artifact_id: string; bytes: number; sha256: string };
      expect(a[0]!.status === 'ok' && sealed.bytes === 14, `the declared writes were answered ${JSON.stringify([a[0], a[3]])}`);
      expect(a[1]!.error?.code === 'C-CONTRACT-OUTPUT-ROLE', `the undeclared role was answered ${JSON.stringify(a[1])}`);
      expect(a[2]!.error?.code === 'C-CONTRACT-OUTPUT-ROLE', `the reserved role log was answered ${JSON.stringify(a[2])}`);
      const listed = JSON.stringify(a[4]!.capability_result?.result ?? {});
      expect(!listed.includes(sealed.artifact_id), 'the output was visible to artifact.list inside its own run');
      const run = getRun(store, r.run_id!)!;
      expect(
        run.outputs.length === 1 && run.outputs[0]!.artifact_id === sealed.artifact_id && run.outputs[0]!.role === 'report',
        `outputs: ${JSON.stringify(run.outputs)}`,
      );
      expect(getArtifact(store, sealed.artifact_id).created_by_run === r.run_id, 'the output is not linked to its run');
      const journal = readJournal(store, r.run_id!);
      expect(
        JSON.stringify(journal[0]!.args) === JSON.stringify({ role: 'report', data_length: 7 }),
        `the journal keeps ${JSON.stringify(journal[0]!.args)}`,
      );
      ctx.observe(
        'codes',
        a.map((x) => x.error?.code ?? x.status),
      );
      const failures: Array<[string, unknown[], string]> = [
        ['nothing written', [], 'role report was not created'],
        ['never sealed', [call('artifact.write', { role: 'report', data: 'half' })], 'never sealed'],
        ['wrong type', [call('artifact.write', { role: 'report', data: '{"a":1}', type: 'json', final: true })], 'has type json'],
      ];
      const after = listArtifacts(store).length;
      for (const [what, calls, problem] of failures) {
        const f = await ctx.call('cap.writer', { calls });
        expectOutcome(f, 'terminal_error', 'C-CONTRACT-DECLARED-OUTPUTS');
        expect(JSON.stringify(f.error!.details).includes(problem), `${what}: ${JSON.stringify(f.error!.details)}`);
      }
      const left = listArtifacts(store).filter((x) => x.source?.kind === 'run' && (x.source as { role?: string }).role === 'report').length;
      expect(left === 1, `${left} report artifacts are in the store: a failed run's output became visible`);
      ctx.observe('artifacts', { before, after_success: after, after_failures: listArtifacts(store).length });
    },
  },
  {
    id: 'capabilities.start-function-call',
    title: 'A start function that calls capability_call ends the call with S-TOOL-TRAP (phase start)',
    category: 'capabilities',
    abi: ['ABI-CAP-009'],
    engines: ['helix'],
    expected: 'terminal_error S-TOOL-TRAP with details.phase "start"; the call never reaches the broker (no journal entry)',
    packs: () => [
      {
        id: 'cap.start_call',
        module: numberResultModule('(i64.const 1)', {
          imports: '(import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))',
          extra: `(data (i32.const 1024) "${watString('{"abi_version":1,"name":"clock.now_unix","args":{}}')}")
  (func $start (drop (call $cap (i32.const 1024) (i32.const 49))))
  (start $start)`,
        }),
        manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const r = await ctx.call('cap.start_call', {});
      expectOutcome(r, 'terminal_error', 'S-TOOL-TRAP');
      expect(r.error!.details.phase === 'start', `phase: ${JSON.stringify(r.error!.details)}`);
      if (r.run_id !== undefined && r.run_id !== null)
        expect(readJournal(hostStore(host), r.run_id).length === 0, 'the start function reached the broker');
      ctx.observe('error', { message: r.error!.message, details: r.error!.details });
      const again = await ctx.call('cap.start_call', { n: 2 });
      expectOutcome(again, 'terminal_error', 'S-TOOL-TRAP');
    },
  },
  // ---- the bulk path --------------------------------------------------------------------------
  {
    id: 'capabilities.bulk-import-needs-abi-2',
    title: 'A module importing capability_call_bulk under capabilities.abiVersion 1 is refused at load',
    category: 'capabilities',
    abi: ['ABI-BULK-001'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-MANIFEST-INVALID naming capability_call_bulk',
    packs: () => [{ ...raw('cap.bulk_v1', ['artifact.read']), module: rawCallerModule({ bulk: true }) }],
    async run(ctx) {
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}`);
      const text = JSON.stringify(refusal.details);
      expect(text.includes('capability_call_bulk'), `the refusal does not name the import: ${text.slice(0, 500)}`);
      ctx.observe('violations', refusal.details.violations);
    },
  },
  {
    id: 'capabilities.bulk-rules',
    title:
      'The bulk import keeps every rule of a capability call: allowlist, argument schema and call ceiling, answering with abi_version 2',
    category: 'capabilities',
    abi: ['ABI-BULK-001'],
    engines: ['helix'],
    expected:
      'a bulk artifact.write from a tool allowlisting only artifact.read gets exactly the forbidden error with abi_version 2; an unknown name through the bulk import is answered I-REQ-BULK-CAPABILITY (only the two bulk names pass); a read with an `encoding` argument gets I-REQ-CAPABILITY-ARGS; a good read gets abi_version 2; a tool with maxCapabilityCalls 3 making 5 bulk reads ends R-CAP-CALL-LIMIT',
    packs: () => [
      raw('cap.bulk', ['artifact.read'], { bulk: true }),
      raw('cap.bulk_few', ['artifact.read'], { bulk: true, limits: { maxCapabilityCalls: 3 } }),
    ],
    async run(ctx) {
      const id = await stored(ctx, new Uint8Array(randomBytes(100)));
      const buf = { ptr: RAW_BUFFER_BASE, len: 64 };
      const calls: RawCall[] = [
        { request: { abi_version: 2, name: 'artifact.write', args: { role: 'x' } }, bulk: buf },
        { request: { abi_version: 2, name: 'no.such_bulk', args: {} }, bulk: buf },
        { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, encoding: 'base64' } }, bulk: buf },
        { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, bulk: buf },
      ];
      const a = rawAnswers(await ctx.call('cap.bulk', rawInput(calls)));
      expect(Buffer.compare(a[0]!.bytes, Buffer.from(errorAnswer(FORBIDDEN, 2))) === 0, `the unlisted write was answered ${a[0]!.text}`);
      expect(
        a[1]!.json.error?.code === 'I-REQ-BULK-CAPABILITY' && a[1]!.json.abi_version === 2,
        `an unknown name was answered ${a[1]!.text}`,
      );
      expect(a[2]!.json.error?.code === 'I-REQ-CAPABILITY-ARGS' && a[2]!.json.abi_version === 2, `encoding was answered ${a[2]!.text}`);
      expect(
        a[3]!.json.status === 'ok' && a[3]!.json.abi_version === 2 && a[3]!.json.capability_result!.result.bytes === 64,
        `the read was answered ${a[3]!.text}`,
      );
      ctx.observe(
        'answers',
        a.map((x) => x.text.slice(0, 200)),
      );
      const read = { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, length: 8 } }, bulk: buf };
      const storm = await ctx.call('cap.bulk_few', rawInput([read, read, read, read, read]));
      expectOutcome(storm, 'terminal_error', 'R-CAP-CALL-LIMIT');
    },
  },
  {
    id: 'capabilities.bulk-not-bulk-name',
    title:
      'A capability other than artifact.read/write through capability_call_bulk is answered I-REQ-BULK-CAPABILITY, and the guest goes on',
    category: 'capabilities',
    abi: ['ABI-BULK-002'],
    engines: ['helix'],
    expected:
      'clock.now_unix and kv.get (both allowlisted) through the bulk import are answered I-REQ-BULK-CAPABILITY with abi_version 2; the buffer is left untouched; a bulk artifact.read after them is answered ok',
    packs: () => [raw('cap.bulk', ['artifact.read', 'clock.now_unix', 'kv.get'], { bulk: true })],
    async run(ctx) {
      const id = await stored(ctx, new Uint8Array(randomBytes(32)));
      const buf = { ptr: RAW_BUFFER_BASE, len: 32, fill: 0x5a };
      const a = rawAnswers(
        await ctx.call(
          'cap.bulk',
          rawInput([
            { request: { abi_version: 2, name: 'clock.now_unix', args: {} }, bulk: buf },
            { request: { abi_version: 2, name: 'kv.get', args: { key: 'k' } }, bulk: buf },
            { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, bulk: { ptr: RAW_BUFFER_BASE, len: 32 } },
          ]),
        ),
      );
      for (const i of [0, 1]) {
        expect(a[i]!.json.error?.code === 'I-REQ-BULK-CAPABILITY' && a[i]!.json.abi_version === 2, `answer ${i}: ${a[i]!.text}`);
        expect(
          a[i]!.dump.every((b) => b === 0x5a),
          `the buffer was written by a refused bulk call: ${a[i]!.dump.toString('hex')}`,
        );
      }
      expect(a[2]!.json.status === 'ok', `the read after them was answered ${a[2]!.text}`);
      ctx.observe('message', a[0]!.json.error!.message);
    },
  },
  {
    id: 'capabilities.bulk-bad-buffer',
    title: 'A bulk buffer outside memory, wrapping past 2^32, or above 4 MiB ends the call before the broker sees it',
    category: 'capabilities',
    abi: ['ABI-BULK-003'],
    engines: ['helix'],
    expected:
      'buffer at the end of memory running past it and one wrapping past 2^32 end terminal_error S-TOOL-BAD-POINTER; a 4 MiB + 1 buffer ends S-TOOL-BULK-BUFFER; none leaves a journal entry or an audit record',
    packs: () => [raw('cap.bulk', ['artifact.read'], { bulk: true })],
    async run(ctx) {
      const host = await ctx.host();
      const id = await stored(ctx, new Uint8Array(16));
      const cases: Array<[string, number, number, string]> = [
        ['past the end of memory', 96 * 65536 - 8, 16, 'S-TOOL-BAD-POINTER'],
        ['wrapping past 2^32', 0xfffffff0, 0x20, 'S-TOOL-BAD-POINTER'],
        ['above BULK_MAX_PIECE', RAW_BUFFER_BASE, 4 * MiB + 1, 'S-TOOL-BULK-BUFFER'],
      ];
      for (const [what, ptr, len, code] of cases) {
        const r = await ctx.call(
          'cap.bulk',
          rawInput([{ request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, bulk: { ptr, len } }]),
        );
        expectOutcome(r, 'terminal_error', code);
        if (r.run_id !== undefined && r.run_id !== null) {
          expect(readJournal(hostStore(host), r.run_id).length === 0, `${what}: the call was journaled`);
          expect(capabilityAudit(host, r.run_id).length === 0, `${what}: the call was audited`);
        }
        ctx.observe(what, { code: r.error!.code, details: r.error!.details });
      }
    },
  },
  {
    id: 'capabilities.bulk-read-write-args',
    title:
      'Bulk reads copy raw bytes up to the buffer and no further; lengths past the buffer and text-path arguments are refused; fuel counts bytes moved',
    category: 'capabilities',
    abi: ['ABI-BULK-004', 'ABI-CAP-006'],
    engines: ['helix'],
    expected:
      'a read of a 20-byte artifact into a 32-byte buffer pre-filled with 0xAA copies exactly the 20 bytes, answers {bytes:20, offset:0, next_offset:20, eof:true} and leaves bytes 20..31 as 0xAA; length 33 into 32 bytes is I-REQ-CAPABILITY-ARGS on /length; a bulk write with `data` is I-REQ-CAPABILITY-ARGS; a 6400-byte read is charged 1000 + ceil((request + answer + 6400)/64)',
    packs: () => [raw('cap.bulk', ['artifact.read', 'artifact.write'], { bulk: true, manifest: { declaredOutputs: [] } })],
    async run(ctx) {
      const host = await ctx.host();
      const small = new Uint8Array(randomBytes(20));
      small[3] = 0xff; // not UTF-8: bytes are raw
      const id = await stored(ctx, small);
      const bigBytes = new Uint8Array(randomBytes(10_000));
      const bigId = await stored(ctx, bigBytes);
      const readBig = { abi_version: 2, name: 'artifact.read', args: { artifact_id: bigId } };
      const r = await ctx.call(
        'cap.bulk',
        rawInput([
          {
            request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } },
            bulk: { ptr: RAW_BUFFER_BASE, len: 32, fill: 0xaa },
          },
          {
            request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, length: 33 } },
            bulk: { ptr: RAW_BUFFER_BASE, len: 32, fill: 0xbb },
          },
          {
            request: { abi_version: 2, name: 'artifact.write', args: { role: 'out', data: 'AAAA' } },
            bulk: { ptr: RAW_BUFFER_BASE, len: 4 },
          },
          { request: readBig, bulk: { ptr: RAW_BUFFER_BASE, len: 6400 } },
        ]),
      );
      const a = rawAnswers(r);
      expect(
        JSON.stringify(a[0]!.json.capability_result?.result) === JSON.stringify({ bytes: 20, offset: 0, next_offset: 20, eof: true }),
        `the read was answered ${a[0]!.text}`,
      );
      expect(Buffer.compare(a[0]!.dump.subarray(0, 20), Buffer.from(small)) === 0, 'the bytes copied are not the artifact');
      expect(
        a[0]!.dump.subarray(20).every((b) => b === 0xaa),
        `bytes past n were touched: ${a[0]!.dump.subarray(20).toString('hex')}`,
      );
      expect(
        a[1]!.json.error?.code === 'I-REQ-CAPABILITY-ARGS' && JSON.stringify(a[1]!.json.error.details).includes('/length'),
        `length 33 was answered ${a[1]!.text}`,
      );
      expect(
        a[1]!.dump.every((b) => b === 0xbb),
        'a refused read wrote into the buffer',
      );
      expect(a[2]!.json.error?.code === 'I-REQ-CAPABILITY-ARGS', `a bulk write with data was answered ${a[2]!.text}`);
      expect(Buffer.compare(a[3]!.dump, Buffer.from(bigBytes.subarray(0, 4096))) === 0, 'the 6400-byte read copied other bytes');
      const entry = readJournal(hostStore(host), r.run_id!).find(
        (e) => e.name === 'artifact.read' && (e.args as { artifact_id?: string }).artifact_id === bigId,
      )!;
      const want = 1000 + Math.ceil((Buffer.byteLength(JSON.stringify(readBig)) + a[3]!.bytes.length + 6400) / 64);
      expect(entry.fuel === want, `the 6400-byte read was charged ${entry.fuel}, not ${want}`);
      ctx.observe('fuel_6400_read', entry.fuel);
    },
  },
  {
    id: 'capabilities.bulk-read-ahead',
    title: 'Whatever the host reads ahead, the guest receives exactly the artifact: in order, in odd pieces, and jumping around',
    category: 'capabilities',
    abi: ['ABI-BULK-005'],
    engines: ['helix'],
    expected:
      "bulk-copy.ts reading a 1.5 MiB random artifact in pieces of 1 MiB, 65537 bytes and 3 MiB + 5 sums to the artifact's byte sum and writes a copy with the artifact's sha256 each time; raw reads at offsets 0, 5n, n, 2n (out of order after a read-ahead) return exactly those slices",
    packs: () => [
      {
        id: 'cap.copy',
        module: '',
        guest: 'bulk-copy.ts',
        manifest: {
          limits: { ...AS_LIMITS, fuel: 5e10, maxCapabilityCalls: 10_000 },
          timeoutMs: 30_000,
          capabilities: { abiVersion: 2, allow: ['artifact.read', 'artifact.write'] },
          declaredOutputs: [{ role: 'copy', type: 'binary', label: 'a copy' }],
        },
      },
      raw('cap.bulk', ['artifact.read'], { bulk: true }),
    ],
    async run(ctx) {
      const bytes = new Uint8Array(randomBytes(MiB + MiB / 2 + 17));
      const id = await stored(ctx, bytes);
      const sum = bytes.reduce((s, b) => s + b, 0);
      const host = await ctx.host();
      for (const piece of [MiB, 65_537, 3 * MiB + 5]) {
        const out = expectSuccess(await ctx.call('cap.copy', { artifact_id: id, piece, copy: true })) as {
          bytes: number;
          sum: number;
          artifact_id: string;
        };
        expect(out.bytes === bytes.length && out.sum === sum, `piece ${piece}: ${JSON.stringify(out)}`);
        expect(getArtifact(hostStore(host), out.artifact_id).sha256 === sha(bytes), `piece ${piece}: the copy differs`);
      }
      const n = 4096;
      const at = (offset: number): RawCall => ({
        request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, offset } },
        bulk: { ptr: RAW_BUFFER_BASE, len: n },
      });
      const offsets = [0, 5 * n, n, 2 * n, MiB - 100];
      const a = rawAnswers(await ctx.call('cap.bulk', rawInput(offsets.map(at))));
      for (const [i, o] of offsets.entries()) {
        expect(Buffer.compare(a[i]!.dump, Buffer.from(bytes.subarray(o, o + n))) === 0, `the read at ${o} returned other bytes`);
      }
      ctx.observe('artifact_bytes', bytes.length);
    },
  },
  {
    id: 'capabilities.bulk-journal',
    title: 'Bulk calls are journaled by data_sha256 (the chunk key for a whole chunk); verify catches a chunk damaged after the run',
    category: 'capabilities',
    abi: ['ABI-BULK-006', 'ABI-CAP-007'],
    engines: ['helix'],
    expected:
      'each bulk read of a 1 MiB-aligned piece is journaled with mode value, the control result as a value, result_sha256 null and data_sha256 the sha256 of the chunk; the writes name their bytes the same way; verifyRun matches; after one byte of the first stored chunk is flipped, verifyRun reports a departure at artifact.read',
    packs: () => [
      {
        id: 'cap.copy',
        module: '',
        guest: 'bulk-copy.ts',
        manifest: {
          limits: { ...AS_LIMITS, fuel: 5e10, maxCapabilityCalls: 10_000 },
          timeoutMs: 30_000,
          capabilities: { abiVersion: 2, allow: ['artifact.read', 'artifact.write'] },
          declaredOutputs: [{ role: 'copy', type: 'binary', label: 'a copy' }],
        },
      },
      {
        id: 'cap.read',
        module: '',
        guest: 'bulk-copy.ts',
        manifest: {
          limits: { ...AS_LIMITS, fuel: 5e10, maxCapabilityCalls: 10_000 },
          timeoutMs: 30_000,
          capabilities: { abiVersion: 2, allow: ['artifact.read'] },
        },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const store = hostStore(host);
      const bytes = new Uint8Array(randomBytes(2 * MiB + 3));
      const id = await stored(ctx, bytes);
      const r = await ctx.call('cap.copy', { artifact_id: id, piece: MiB, copy: true });
      expectSuccess(r);
      const journal = readJournal(store, r.run_id!);
      const chunk = (i: number) => sha(bytes.subarray(i * MiB, (i + 1) * MiB));
      const reads = journal.filter((e) => e.name === 'artifact.read');
      expect(
        JSON.stringify(reads.map((e) => e.data_sha256)) === JSON.stringify([chunk(0), chunk(1), chunk(2)]),
        `reads name ${JSON.stringify(reads.map((e) => e.data_sha256))}`,
      );
      expect(
        reads.every((e) => e.mode === 'value' && e.result_sha256 === null && typeof (e.result as { bytes?: number }).bytes === 'number'),
        'a bulk read is not kept as a value',
      );
      const writes = journal.filter((e) => e.name === 'artifact.write' && (e.result as { bytes?: number } | null) !== null);
      expect(writes[0]?.data_sha256 === chunk(0), `the first write names ${writes[0]?.data_sha256}`);
      const report = await verifyRun(store, r.run_id!);
      expect(report.match === true, `verify of the untouched run: ${JSON.stringify(report).slice(0, 500)}`);
      // A run that only reads, so the departure can only come from its reads.
      const other = new Uint8Array(randomBytes(MiB + 100));
      const otherId = await stored(ctx, other);
      const readOnly = await ctx.call('cap.read', { artifact_id: otherId, piece: MiB });
      expectSuccess(readOnly);
      expect((await verifyRun(store, readOnly.run_id!)).match === true, 'verify of the untouched read-only run failed');
      const key = sha(other.subarray(0, MiB));
      const chunks = rawDatabases(store).chunks;
      const damaged = Buffer.from(chunks.get(key) as Buffer);
      damaged[5] = damaged[5]! ^ 0xff;
      await chunks.put(key, damaged);
      const after = await verifyRun(store, readOnly.run_id!);
      expect(
        after.match === false && /artifact\.read/.test(JSON.stringify(after.first_difference)),
        `a damaged chunk was not reported at artifact.read: ${JSON.stringify(after).slice(0, 500)}`,
      );
      ctx.observe('first_difference', after.first_difference);
      // Leave the store as it was for the canary.
      damaged[5] = damaged[5]! ^ 0xff;
      await chunks.put(key, damaged);
    },
  },
];
