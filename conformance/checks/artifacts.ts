// Conformance checks: artifacts and the import and export boundaries. A file becomes an artifact
// only when it is a regular file inside the import roots reached without links; a refusal stores
// nothing and holds nothing; stored bytes are checked on every read; an export never follows a
// link out of the export roots; an artifact a request names must exist.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isHelixError, type ResponseEnvelope } from '../../abi/index.js';
import { hostStore, type Host } from '../../host/5-host/host.js';
import { blobRecord } from '../../host/3-store/blobs.js';
import { rawDatabases } from '../../host/3-store/raw-access.js';
import { CheckFailure, expect, expectOutcome, expectSuccess, type Check, type CheckContext } from '../check.js';
import { expectExit, expectNoLeak, MARKER, runHelix, swapper } from '../kit/files-kit.js';
import { echoModule } from '../kit/guest-wat.js';
import { checkDefaultPolicy } from '../runner.js';

const SECRET = `${MARKER} secret bytes outside the import root\n`;

/** What the store holds: artifacts, blobs, chunks and pending writes. */
function counts(host: Host): { artifacts: number; blobs: number; chunks: number; pending: number } {
  const db = rawDatabases(hostStore(host));
  return {
    artifacts: db.artifacts.getKeysCount(),
    blobs: db.blobs.getKeysCount(),
    chunks: db.chunks.getKeysCount(),
    pending: db.pending.getKeysCount(),
  };
}

/** The HelixError a promise rejects with (a CheckFailure when it resolves or throws something else). */
async function refusal(what: string, p: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  try {
    await p;
  } catch (e) {
    if (!isHelixError(e)) throw new CheckFailure(`${what} failed with an internal error: ${e instanceof Error ? e.stack : String(e)}`);
    return { code: e.code, message: e.message, hint: e.hint };
  }
  throw new CheckFailure(`${what} succeeded; it had to be refused`);
}

/** Fails unless importing `file` is refused with `code` and a message matching `message` and a hint. */
async function expectImportRefused(ctx: CheckContext, host: Host, file: string, code: string, message: RegExp): Promise<number> {
  const t0 = performance.now();
  const r = await refusal(`importing ${file}`, host.artifacts.importFile(file));
  const ms = Math.round(performance.now() - t0);
  ctx.note(`import ${file}: ${r.code} in ${ms} ms: ${r.message}`);
  expect(
    r.code === code && message.test(r.message),
    `importing ${file}: ${r.code}: ${r.message}; expected ${code} matching ${String(message)}`,
  );
  expect((r.hint ?? '').length > 0, `importing ${file}: the refusal has no hint`);
  expectNoLeak(r.message, `the refusal of ${file}`);
  return ms;
}

/** A 2 MiB + 5 byte artifact (three 1 MiB chunks). */
const bigContent = (): Buffer => Buffer.concat([Buffer.alloc(2 * 1024 * 1024, 'ACGT'), Buffer.from('tail\n')]);

export const artifactChecks: readonly Check[] = [
  {
    id: 'artifacts.import-outside-root',
    title: 'Imports that climb out with .., name a path outside, or go through a symbolic link are refused and store nothing',
    category: 'artifacts',
    abi: ['ABI-PATH-001', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      'A-AUTH-PATH-OUTSIDE-ROOTS for root/../outside/secret, root/sub/../../outside/secret, /etc/passwd, and an outside path that does not exist (the same message shape: no existence oracle); A-AUTH-SYMLINK for a link in the root to the secret, a path through a linked directory, and a link to a file inside the root; helix artifact import exits 1 with nothing on stdout; no artifact, blob, chunk or pending write afterwards',
    async run(ctx) {
      const host = await ctx.host();
      const root = ctx.env.importRoot;
      const outside = path.join(ctx.env.dir, 'outside');
      mkdirSync(outside);
      mkdirSync(path.join(root, 'sub'));
      writeFileSync(path.join(outside, 'secret'), SECRET);
      writeFileSync(path.join(root, 'real.txt'), 'inside\n');
      symlinkSync(path.join(outside, 'secret'), path.join(root, 'escape'));
      symlinkSync(outside, path.join(root, 'escape-dir'));
      symlinkSync(path.join(root, 'real.txt'), path.join(root, 'inner-link'));
      const before = counts(host);
      const OUT = /it is outside the import roots/;
      await expectImportRefused(ctx, host, `${root}/../outside/secret`, 'A-AUTH-PATH-OUTSIDE-ROOTS', OUT);
      await expectImportRefused(ctx, host, `${root}/sub/../../outside/secret`, 'A-AUTH-PATH-OUTSIDE-ROOTS', OUT);
      await expectImportRefused(ctx, host, '/etc/passwd', 'A-AUTH-PATH-OUTSIDE-ROOTS', OUT);
      const exists = await refusal('an existing outside file', host.artifacts.importFile(path.join(outside, 'secret')));
      const missing = await refusal('a missing outside file', host.artifacts.importFile(path.join(outside, 'no-such-file')));
      expect(
        exists.code === missing.code && exists.message.replace('secret', 'X') === missing.message.replace('no-such-file', 'X'),
        `an outside path's refusal tells whether it exists: "${exists.message}" vs "${missing.message}"`,
      );
      await expectImportRefused(ctx, host, path.join(root, 'escape'), 'A-AUTH-SYMLINK', /it is a symbolic link/);
      await expectImportRefused(ctx, host, path.join(root, 'escape-dir', 'secret'), 'A-AUTH-SYMLINK', /symbolic link/);
      await expectImportRefused(ctx, host, path.join(root, 'inner-link'), 'A-AUTH-SYMLINK', /it is a symbolic link/);
      const cli = await runHelix(
        ['artifact', 'import', `${root}/../outside/secret`, '--home', host.home, '--policy', path.join(ctx.env.dir, 'policy.yaml')],
        { cwd: ctx.env.dir },
      );
      expectExit(cli, 1, 'helix artifact import ../outside/secret');
      expect(
        cli.stdout === '' && /^helix: A-AUTH-PATH-OUTSIDE-ROOTS: /.test(cli.stderr),
        `helix artifact import: stdout ${cli.stdout.slice(0, 200)} stderr ${cli.stderr.slice(0, 300)}`,
      );
      expectNoLeak(cli.stderr, 'helix artifact import');
      const after = counts(host);
      ctx.observe('store', { before, after });
      expect(
        JSON.stringify(after) === JSON.stringify(before),
        `the refused imports changed the store: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`,
      );
      expect(after.pending === 0, `${after.pending} pending writes left`);
    },
  },
  {
    id: 'artifacts.import-devices-fifos',
    title:
      'Devices (/dev/zero, /dev/urandom), a FIFO and a link to /dev/zero are refused at once; a file that grows past the ceiling while read leaves nothing held',
    category: 'artifacts',
    abi: ['ABI-PATH-001', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      'with /dev and /proc/<pid> among the import roots: /dev/zero, /dev/urandom and /dev/null are P-PRECOND-PATH "character device", a FIFO with no writer is P-PRECOND-PATH "FIFO" (each within 2 s, nothing waited on or read), a link to /dev/zero is A-AUTH-SYMLINK; /proc/<pid>/maps (size 0, then more than the 4096-byte ceiling) is I-REQ-TOO-LARGE "grew past the import limit"; afterwards no artifact and no pending write',
    policy: (_engine, env) => ({
      ...checkDefaultPolicy(env),
      ceilings: { maxImportBytes: 4096 },
      paths: { importRoots: [env.importRoot, '/dev', `/proc/${process.pid}`], exportRoots: [path.join(env.dir, 'export')] },
    }),
    async run(ctx) {
      const host = await ctx.host();
      const root = ctx.env.importRoot;
      execFileSync('mkfifo', [path.join(root, 'pipe')]);
      symlinkSync('/dev/zero', path.join(root, 'zero-link'));
      const times: Record<string, number> = {};
      for (const dev of ['/dev/zero', '/dev/urandom', '/dev/null'])
        times[dev] = await expectImportRefused(ctx, host, dev, 'P-PRECOND-PATH', /it is a character device, not a regular file/);
      times.fifo = await expectImportRefused(
        ctx,
        host,
        path.join(root, 'pipe'),
        'P-PRECOND-PATH',
        /it is a FIFO \(named pipe\), not a regular file/,
      );
      await expectImportRefused(ctx, host, path.join(root, 'zero-link'), 'A-AUTH-SYMLINK', /symbolic link/);
      await expectImportRefused(
        ctx,
        host,
        `/proc/${process.pid}/maps`,
        'I-REQ-TOO-LARGE',
        /grew past the import limit of 4096 bytes while being read/,
      );
      ctx.observe('refusal_ms', times);
      for (const [what, ms] of Object.entries(times)) expect(ms < 2000, `${what} took ${ms} ms to refuse`);
      const after = counts(host);
      ctx.observe('store_after', after);
      expect(after.artifacts === 0 && after.pending === 0, `after the refusals the store holds ${JSON.stringify(after)}`);
    },
  },
  {
    id: 'artifacts.import-swap-race',
    title: 'A file swapped back and forth with a link to a secret while it is imported never brings the secret into the store',
    category: 'artifacts',
    abi: ['ABI-PATH-001', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      'repeated imports while another process swaps root/data between a regular file and a link to a file outside: each is either an artifact holding exactly the inside bytes or a refusal (A-AUTH-SYMLINK, or P-PRECOND-PATH "replaced between the checks and the open"); no stored artifact holds the secret; no pending write is left',
    async run(ctx) {
      const host = await ctx.host();
      const secret = path.join(ctx.env.dir, 'secret.txt');
      writeFileSync(secret, SECRET);
      const target = path.join(ctx.env.importRoot, 'data.txt');
      const inside = 'inside bytes\n';
      writeFileSync(target, inside);
      const swap = swapper(target, inside, secret, 12_000);
      ctx.defer(() => swap.stop());
      const outcomes: Record<string, number> = {};
      const soft = Date.now() + 2500;
      const hard = Date.now() + 10_000;
      let n = 0;
      while ((Date.now() < soft || n < 20) && Date.now() < hard) {
        n += 1;
        try {
          const art = await host.artifacts.importFile(target);
          const bytes = (await host.artifacts.readBytes(art.id, 1 << 20)).toString('utf8');
          if (bytes !== inside)
            throw new CheckFailure(`import ${n} stored other bytes than the inside file: ${JSON.stringify(bytes.slice(0, 80))}`);
          outcomes.imported = (outcomes.imported ?? 0) + 1;
        } catch (e) {
          if (e instanceof CheckFailure) throw e;
          if (!isHelixError(e))
            throw new CheckFailure(`import ${n} failed with an internal error: ${e instanceof Error ? e.stack : String(e)}`);
          const key = `${e.code}: ${e.message.replace(/^Cannot import \S+: /, '').replace(/\(its real path is .*\)/, '(real path)')}`;
          outcomes[key] = (outcomes[key] ?? 0) + 1;
          expect(['A-AUTH-SYMLINK', 'P-PRECOND-PATH'].includes(e.code), `import ${n}: ${e.code}: ${e.message}`);
          expectNoLeak(e.message, `import ${n}'s refusal`);
        }
      }
      await swap.stop();
      ctx.observe('imports', n);
      ctx.observe('outcomes', outcomes);
      for (const art of host.artifacts.list({ limit: 1000 })) {
        const bytes = (await host.artifacts.readBytes(art.id, 1 << 20)).toString('utf8');
        expect(!bytes.includes(MARKER), `artifact ${art.id} holds the secret`);
      }
      const after = counts(host);
      ctx.observe('store_after', after);
      expect(after.pending === 0, `${after.pending} pending writes left after the race`);
      expect(
        Object.keys(outcomes).some((k) => k.startsWith('A-AUTH-SYMLINK') || k.startsWith('P-PRECOND-PATH')),
        'the link was never seen: the race did not happen',
      );
    },
  },
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
      const chunks = blobRecord(hostStore(host), art.sha256)!.chunks;
      expect(chunks.length === 3, `the artifact has ${chunks.length} chunks, expected 3`);
      const original = Buffer.from(rawDatabases(hostStore(host)).chunks.get(chunks[1]!)!);
      const forged = Buffer.from(original);
      forged.fill('T', 0, 64);
      rawDatabases(hostStore(host)).chunks.putSync(chunks[1]!, forged);
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
