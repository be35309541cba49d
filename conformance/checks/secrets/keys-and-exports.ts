// Secret checks of keyed hashes, verify, an upstream, and what the CLI shows: the journal keeps a
// keyed hash of the secret, verify needs the key to match, an http.request carries the secret only
// to the upstream, and helix runs show and an RO-Crate export hold no form of it (ABI-SECRET-005..008).
import { createHash, createHmac } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, expectSuccess, type Check } from '../../check.js';
import { formsInTree, MARKER, SECRET, SECRET_KEY_FILE, SECRET_NAME, startUpstream, type Hit } from '../../kit/caps-kit.js';
import { answersOf, call, expectClean, expectMarker, guest, helix, paths, runRecords, scanHome, secretPolicy } from './shared.js';

/** The checks of this file, in the report's order. */
export const keyAndExportChecks: readonly Check[] = [
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
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, calls: [call('kv.get', { key: 'nothing' })], output: 'no secret here' });
      expectSuccess(r);
      const journal = host.runs.journal(r.run_id!);
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
      const rec = host.runs.get(r.run_id!)!;
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
      await host.diagnostics.flushed();
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
      const r = await ctx.call('s.paths', { secret: SECRET_NAME, calls: [call('kv.get', { key: 'x' })], output: 'plain' });
      expectSuccess(r);
      const first = await host.runs.verify(r.run_id!);
      expect(first.match === true, `verify with the key: ${JSON.stringify(first).slice(0, 400)}`);
      const keyFile = path.join(host.home, SECRET_KEY_FILE);
      const saved = path.join(ctx.env.dir, 'key.saved');
      copyFileSync(keyFile, saved);
      ctx.defer(() => copyFileSync(saved, keyFile));
      writeFileSync(keyFile, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
      const other = await host.runs.verify(r.run_id!);
      expect(
        other.match === false && (other.first_difference as { seq?: number } | undefined)?.seq === 0,
        `verify with another key: ${JSON.stringify(other).slice(0, 400)}`,
      );
      rmSync(keyFile);
      let refusal: { code?: string; message?: string } | undefined;
      try {
        await host.runs.verify(r.run_id!);
      } catch (e) {
        refusal = e as { code?: string; message?: string };
      }
      expect(
        refusal?.code === 'P-PRECOND-VERIFY' && /secret hash key/.test(refusal.message ?? ''),
        `verify without the key: ${JSON.stringify(refusal)}`,
      );
      copyFileSync(saved, keyFile);
      const again = await host.runs.verify(r.run_id!);
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
      const entry = host.runs.journal(r.run_id!)[1]!;
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
      await host.diagnostics.flushed();
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
