// Artifact checks of stored artifacts: bytes are checked on every read, so a tampered chunk is
// refused everywhere; an artifact a request names must exist; and an export never follows a link
// out of the export roots (ABI-STORE-021, ABI-EXPORT-*).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResponseEnvelope } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { expectExit, expectNoLeak, runHelix } from '../../kit/files-kit.js';
import { echoModule } from '../../kit/guest-wat.js';
import { bigContent, refusal } from './shared.js';

/** The checks of this file, in the report's order. */
export const storedArtifactChecks: readonly Check[] = [
  {
    id: 'artifacts.tampered-chunk',
    title:
      "A stored chunk altered in place (same length) fails every read: host read, export, helix artifact export and a guest's artifact.read",
    category: 'artifacts',
    abi: ['ABI-STORE-021'],
    engines: ['helix'],
    expected:
      'after the middle chunk of a 3-chunk artifact is overwritten with other bytes of the same length: host.artifacts.readBytes and host.artifacts.export fail D-DATA-CHECKSUM (no destination file, nothing left in the export directory), helix artifact export exits 1 with D-DATA-CHECKSUM, a guest reading at 1 MiB + 10 gets an error answer naming D-DATA-CHECKSUM; reading the untouched artifact beside it still works',
    packs: () => [
      { id: 'artifacts.reader', guest: 'script.ts', module: '', manifest: { capabilities: { abiVersion: 1, allow: ['artifact.read'] } } },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const content = bigContent();
      const art = await host.artifacts.importInline(content, { maxBytes: 8 << 20 });
      const intact = await host.artifacts.importInline('>untouched\nACGT\n');
      const chunks = host.diagnostics.chunksOf(art.sha256)!;
      expect(chunks.length === 3, `the artifact has ${chunks.length} chunks, expected 3`);
      const forged = host.diagnostics.bytes('chunks', chunks[1]!)!;
      forged.fill('T', 0, 64);
      await host.diagnostics.plant('chunks', chunks[1]!, forged);
      ctx.observe('tampered', { artifact: art.id, chunk: chunks[1], bytes: forged.length });
      const read = await refusal('reading the tampered artifact', host.artifacts.readBytes(art.id, 8 << 20));
      expect(read.code === 'D-DATA-CHECKSUM', `host read: ${read.code}: ${read.message}`);
      const exportDir = path.join(ctx.env.dir, 'export');
      const dest = path.join(exportDir, 'copy.bin');
      const exp = await refusal('exporting the tampered artifact', host.artifacts.export(art.id, dest));
      expect(exp.code === 'D-DATA-CHECKSUM' && /does not match its hash/.test(exp.message), `export: ${exp.code}: ${exp.message}`);
      expect(!existsSync(dest) && readdirSync(exportDir).length === 0, `the failed export left ${readdirSync(exportDir).join(', ')}`);
      const cli = await runHelix(
        [
          'artifact',
          'export',
          art.id,
          path.join(exportDir, 'cli.bin'),
          '--home',
          host.home,
          '--policy',
          path.join(ctx.env.dir, 'policy.yaml'),
        ],
        { cwd: ctx.env.dir },
      );
      expectExit(cli, 1, 'helix artifact export of the tampered artifact');
      expect(
        /D-DATA-CHECKSUM/.test(cli.stderr) && !existsSync(path.join(exportDir, 'cli.bin')),
        `helix artifact export: ${cli.stderr.slice(0, 400)}`,
      );
      expectNoLeak(cli.stderr, 'helix artifact export');
      const r = await ctx.call('artifacts.reader', {
        calls: [
          { name: 'artifact.read', args: { artifact_id: art.id, offset: 1024 * 1024 + 10, length: 100 } },
          { name: 'artifact.read', args: { artifact_id: intact.id, length: 100 } },
        ],
      });
      const out = expectSuccess(r) as { answers?: unknown[] };
      const answers = JSON.stringify(out.answers ?? []);
      ctx.observe(
        'guest_answers',
        (out.answers ?? []).map((a) => JSON.stringify(a).slice(0, 300)),
      );
      expect(
        /D-DATA-CHECKSUM/.test(JSON.stringify(out.answers?.[0])),
        `the guest's read of the tampered chunk answered ${answers.slice(0, 400)}`,
      );
      expect(
        /untouched/.test(JSON.stringify(out.answers?.[1])),
        `the guest's read of the intact artifact answered ${answers.slice(0, 400)}`,
      );
    },
  },
  {
    id: 'artifacts.missing-references',
    title:
      'A request naming an artifact that does not exist, or a path instead of an id, is refused before anything runs; equal content is the same run',
    category: 'artifacts',
    abi: ['ABI-RUNID-001'],
    engines: ['helix'],
    expected:
      'a well-formed unknown artifact id in an x-helix-artifact field is terminal_error P-PRECOND-ARTIFACT-NOT-FOUND with fuel 0; "../../etc/passwd" there is invalid_request I-REQ-INPUT; helix artifact show of the unknown id exits 1 and export is P-PRECOND-ARTIFACT-NOT-FOUND; two artifacts of the same bytes under different ids are the same run (replayed), by content',
    packs: () => [
      {
        id: 'artifacts.takes',
        module: echoModule(),
        inputSchema: { type: 'object', required: ['reads'], properties: { reads: { type: 'string', 'x-helix-artifact': true } } },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      const ghost = 'art_0000000000000000000000000Z';
      const missing = await ctx.call('artifacts.takes', { reads: ghost });
      expectOutcome(missing, 'terminal_error', 'P-PRECOND-ARTIFACT-NOT-FOUND');
      expect(missing.metrics.fuel_used === 0, `the tool ran (fuel ${missing.metrics.fuel_used}) for a missing artifact`);
      const traversal = await ctx.call('artifacts.takes', { reads: '../../etc/passwd' });
      expectOutcome(traversal, 'invalid_request', 'I-REQ-INPUT');
      expectNoLeak(JSON.stringify(traversal.error), 'the refusal of a path as an artifact id');
      const show = await runHelix(['artifact', 'show', ghost, '--home', host.home], { cwd: ctx.env.dir });
      expectExit(show, 1, 'helix artifact show of an unknown id');
      expect(/P-PRECOND-ARTIFACT-NOT-FOUND/.test(show.stderr), `helix artifact show: ${show.stderr.slice(0, 300)}`);
      const exp = await refusal('exporting an unknown artifact', host.artifacts.export(ghost, path.join(ctx.env.dir, 'export', 'x')));
      expect(exp.code === 'P-PRECOND-ARTIFACT-NOT-FOUND', `export of an unknown artifact: ${exp.code}`);
      const a = await host.artifacts.importInline('>same\nACGT\n', { label: 'one' });
      const b = await host.artifacts.importInline('>same\nACGT\n', { label: 'two' });
      expect(a.id !== b.id, 'two imports share an id');
      const first: ResponseEnvelope = await ctx.call('artifacts.takes', { reads: a.id });
      const second = await ctx.call('artifacts.takes', { reads: b.id });
      expectSuccess(first);
      expect(
        second.run_id === first.run_id && second.replayed === true,
        `the same content under another id is run ${second.run_id} (replayed ${second.replayed}), not ${first.run_id}`,
      );
      ctx.observe('runs', { by_a: first.run_id, by_b: second.run_id });
    },
  },
  {
    id: 'artifacts.export-through-links',
    title:
      'Exports to a symbolic link, through a linked directory, out with .., onto an existing file or a FIFO are refused and touch nothing',
    category: 'artifacts',
    abi: ['ABI-PATH-002'],
    engines: ['helix'],
    expected:
      'host.artifacts.export: a destination that is a link to a file outside is A-AUTH-SYMLINK (also with overwrite) and the target keeps its bytes; a path through a linked directory and export/../outside are A-AUTH-PATH-OUTSIDE-ROOTS; an existing file without overwrite and a FIFO are P-PRECOND-PATH within 2 s; helix artifact export to the link exits 1 with A-AUTH-SYMLINK; the export directory holds nothing new',
    async run(ctx) {
      const host = await ctx.host();
      const art = await host.artifacts.importInline('exported bytes\n');
      const exportDir = path.join(ctx.env.dir, 'export');
      const outside = path.join(ctx.env.dir, 'outside');
      mkdirSync(outside);
      const target = path.join(outside, 'target.txt');
      writeFileSync(target, 'untouched');
      symlinkSync(target, path.join(exportDir, 'link.txt'));
      symlinkSync(outside, path.join(exportDir, 'elsewhere'));
      writeFileSync(path.join(exportDir, 'existing.txt'), 'keep me');
      execFileSync('mkfifo', [path.join(exportDir, 'pipe')]);
      const before = readdirSync(exportDir).sort();
      const cases: Array<[string, string, boolean, string, RegExp]> = [
        ['a link to outside', path.join(exportDir, 'link.txt'), false, 'A-AUTH-SYMLINK', /it is a symbolic link/],
        ['a link to outside, overwrite', path.join(exportDir, 'link.txt'), true, 'A-AUTH-SYMLINK', /symbolic link/],
        [
          'through a linked directory',
          path.join(exportDir, 'elsewhere', 'copy.txt'),
          false,
          'A-AUTH-PATH-OUTSIDE-ROOTS',
          /outside the export roots/,
        ],
        ['.. out of the root', `${exportDir}/../outside/copy.txt`, false, 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside the export roots/],
        ['an existing file', path.join(exportDir, 'existing.txt'), false, 'P-PRECOND-PATH', /already exists/],
        ['a FIFO, overwrite', path.join(exportDir, 'pipe'), true, 'P-PRECOND-PATH', /./],
      ];
      const seen: Record<string, string> = {};
      for (const [what, dest, overwrite, code, message] of cases) {
        const t0 = performance.now();
        const r = await refusal(`export to ${what}`, host.artifacts.export(art.id, dest, { overwrite }));
        const ms = Math.round(performance.now() - t0);
        seen[what] = `${r.code} (${ms} ms): ${r.message}`;
        expect(r.code === code && message.test(r.message), `export to ${what}: ${r.code}: ${r.message}`);
        expect(ms < 2000, `export to ${what} took ${ms} ms`);
      }
      ctx.observe('refusals', seen);
      expect(readFileSync(target, 'utf8') === 'untouched', 'the link target outside was written');
      expect(readFileSync(path.join(exportDir, 'existing.txt'), 'utf8') === 'keep me', 'the existing file was overwritten');
      expect(readdirSync(outside).join() === 'target.txt', `files appeared outside: ${readdirSync(outside).join(', ')}`);
      const cli = await runHelix(
        [
          'artifact',
          'export',
          art.id,
          path.join(exportDir, 'link.txt'),
          '--overwrite',
          '--home',
          host.home,
          '--policy',
          path.join(ctx.env.dir, 'policy.yaml'),
        ],
        { cwd: ctx.env.dir },
      );
      expectExit(cli, 1, 'helix artifact export to a link');
      expect(/^helix: A-AUTH-SYMLINK: /.test(cli.stderr), `helix artifact export: ${cli.stderr.slice(0, 300)}`);
      expect(
        readFileSync(target, 'utf8') === 'untouched' && JSON.stringify(readdirSync(exportDir).sort()) === JSON.stringify(before),
        'helix artifact export changed the files',
      );
    },
  },
];
