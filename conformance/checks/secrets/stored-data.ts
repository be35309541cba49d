// Secret checks of what a guest stores: a kv key or value, an artifact's pieces (across pieces too)
// and labels holding the secret are refused, or keep the marker in its place, and the store holds
// no form of it (ABI-SECRET-001..003).
import { readFileSync } from 'node:fs';
import type { ResponseEnvelope } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { MARKER, SECRET, SECRET_NAME, TEMPLATES } from '../../kit/caps-kit.js';
import { answersOf, call, expectClean, paths, runRecords, scanHome, secretPolicy, writer } from './shared.js';

/** The checks of this file, in the report's order. */
export const storedDataChecks: readonly Check[] = [
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
      const refused = host.audit.list({ runId: r.run_id! }).filter((x) => (x as { decision?: string }).decision === 'refused').length;
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
      // The value as stored in the tool's kv namespace.
      const value = host.diagnostics.record('kv', ['s.paths', `k ${MARKER}`]) as Record<string, unknown> | undefined;
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
      const journaled = (r: ResponseEnvelope) =>
        host.runs
          .journal(r.run_id!)
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
        JSON.stringify(host.runs.journal(split.run_id!)[1]!.args) === JSON.stringify({ role: 'report', data_length: 'head '.length + 9 }),
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
      await host.diagnostics.flushed();
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
      const r = await ctx.call('s.writer', {
        secret: SECRET_NAME,
        calls: [
          call('artifact.write', { role: 'report', data: 'line 1 {{raw|||0|7}}', label: 'for {{json}}' }),
          call('artifact.write', { role: 'report', data: '{{raw|||7|}}\nline 2 {{b64url|ab}}\n' }),
          call('artifact.write', { role: 'report', data: '{{b64|xy|\n}}', encoding: 'base64', final: true }),
        ],
      });
      expectSuccess(r);
      const artifact = host.artifacts.get(host.runs.get(r.run_id!)!.outputs[0]!.artifact_id);
      const bytes = await host.artifacts.readBytes(artifact.id, 1e6);
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
];
