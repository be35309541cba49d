// Secret checks of what a run records and answers: log lines, the output, its error message,
// capability names and arguments, and an extism/v1 plugin's output never carry the secret; the
// journal, audit trail and run record keep the marker (ABI-SECRET-001..004).
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { extismForwarder, MARKER, SECRET_NAME, TEMPLATES } from '../../kit/caps-kit.js';
import { answersOf, call, expectClean, expectMarker, paths, runRecords, scanHome, secretPolicy } from './shared.js';

/** The checks of this file, in the report's order. */
export const runRecordChecks: readonly Check[] = [
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
      const line = host.audit.list({ runId: r.run_id!, kind: 'log' })[0] as
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
      const lines = host.audit.list({ runId: r.run_id!, kind: 'log' }).map((a) => (a as { event?: string }).event);
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
      const rec = host.runs.get(r.run_id!)!;
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
      const journal = host.runs.journal(r.run_id!);
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
      const [entry] = host.runs.journal(r.run_id!);
      expect(
        entry?.name === 'secrets.get' && entry.mode === 'redacted' && entry.result === null && entry.keyed === true,
        `the journal entry: ${JSON.stringify(entry).slice(0, 300)}`,
      );
      expectClean("the run's records", await runRecords(host, r.run_id!));
      await scanHome(ctx);
    },
  },
];
