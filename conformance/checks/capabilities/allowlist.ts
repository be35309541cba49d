// Capability checks of the allowlist and the grants (ABI-CAP-002, ABI-CAP-004, ABI-CAP-005): every
// name that is not allowlisted and granted gets the same forbidden bytes, a manifest listing what
// the host lacks or a bare scoped name is refused at load, a secret scope reaches exactly one
// secret, and a tool listing what the policy does not grant, privileged names above all, never runs.
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { FORBIDDEN_BYTES } from '../../../host/5-host/inspection.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { rawAnswers, rawInput, sendRequests } from '../../kit/caps-kit.js';
import { answersOf, BASE_GRANTS, call, capabilityAudit, CLOCK_CALL, policyWith, raw, script, secretFile } from './shared.js';

/** Names that must all be refused with the same bytes, and why each is refused. */
const REFUSED_NAMES: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ['no.such_thing', {}, 'unknown'],
  ['kv.put', { key: 'k', value: 1 }, 'granted by the policy, not allowlisted'],
  ['secrets.get', { name: 'api_token' }, 'scope not allowlisted'],
  ['docker.run', { image: `sha256:${'0'.repeat(64)}`, argv: ['id'] }, 'privileged, not allowlisted or granted'],
  ['slurm.submit', { argv: ['id'] }, 'privileged, not allowlisted or granted'],
  ['CLOCK.NOW_UNIX', {}, 'case-folded allowlisted name'],
  ['clock.now_unix ', {}, 'allowlisted name with a trailing space'],
  ['clock.now_unix.x', {}, 'allowlisted name with a suffix'],
  ['clock.*', {}, 'a pattern'],
  ['../../etc/passwd', {}, 'a path'],
  ['x'.repeat(200), {}, 'a 200-character name (the longest the envelope allows)'],
];

/** The checks of this file, in the report's order. */
export const allowlistChecks: readonly Check[] = [
  {
    id: 'capabilities.forbidden-same-bytes',
    title: 'Every name that is not allowlisted and granted gets byte-identical `forbidden` answers',
    category: 'capabilities',
    abi: ['ABI-CAP-002'],
    engines: ['helix', 'extism'],
    expected: `each of ${REFUSED_NAMES.length} refused names (unknown, granted but unlisted, wrong secret scope, docker.run, slurm.submit, case and suffix variants, a pattern, a path, a long name) is answered with exactly the bytes of A-AUTH-FORBIDDEN "forbidden", the audit records the different reasons, and the allowlisted clock.now_unix is still answered ok`,
    packs: (engine) => [engine.caller.pack('cap.caller', ['clock.now_unix', 'secrets.get.db_password'])],
    policy: (_e, env) =>
      policyWith(
        env,
        { '*': BASE_GRANTS, 'cap.*': ['secrets.get.db_password'] },
        { secrets: { db_password: { file: secretFile(env, 'not-used-here') } } },
      ),
    async run(ctx) {
      const host = await ctx.host();
      const forbidden = Buffer.from(FORBIDDEN_BYTES);
      ctx.observe('forbidden_bytes', forbidden.toString('utf8'));
      const requests = [...REFUSED_NAMES.map(([name, args]) => ({ abi_version: 1, name, args })), CLOCK_CALL];
      const { answers, responses } = await sendRequests(ctx.call, ctx.engine.caller, 'cap.caller', requests);
      for (const [i, [name, , why]] of REFUSED_NAMES.entries()) {
        expect(
          Buffer.compare(answers[i]!.bytes, forbidden) === 0,
          `${name.slice(0, 40)} (${why}) was answered ${answers[i]!.text.slice(0, 300)}, not the forbidden bytes`,
        );
      }
      expect(answers.at(-1)!.json.status === 'ok', `clock.now_unix after the refusals was answered ${answers.at(-1)!.text}`);
      // One audit record a call, in the order the requests went, whatever runs they went in.
      const audit = responses.flatMap((r) => capabilityAudit(host, r.run_id!));
      const reasons = new Map(REFUSED_NAMES.map(([, , why], i) => [why, audit[i]?.reason ?? ''] as const));
      ctx.observe('distinct_answers', new Set(answers.slice(0, -1).map((a) => a.text)).size);
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
    packs: (engine) => [
      engine.caller.pack('cap.ungranted', ['clock.now_unix', 'kv.put']),
      engine.caller.pack('cap.granted', ['clock.now_unix']),
    ],
    policy: (_e, env) => policyWith(env, { '*': ['clock.*'] }),
    async run(ctx) {
      const host = await ctx.host();
      const request = { abi_version: 1, name: 'kv.put', args: { key: 'k', value: 1 } };
      const r = await ctx.call('cap.ungranted', ctx.engine.caller.input([request]));
      expectOutcome(r, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      expect(JSON.stringify(r.error!.details.capabilities) === '["kv.put"]', `the refusal names ${JSON.stringify(r.error!.details)}`);
      if (r.run_id !== null && r.run_id !== undefined) {
        expect(host.runs.journal(r.run_id).length === 0, 'the refused tool made capability calls');
      }
      ctx.observe('run_id', r.run_id ?? null);
      expectSuccess(await ctx.call('cap.granted', ctx.engine.caller.input([CLOCK_CALL])));
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
];
