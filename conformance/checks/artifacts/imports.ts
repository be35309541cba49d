// Artifact checks of imports: a file becomes an artifact only when it is a regular file inside the
// import roots reached without links, and a refusal, however it comes (a path outside, a device, a
// FIFO, a file swapped for a link mid-import), stores nothing and holds nothing (ABI-IMPORT-*).
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isHelixError } from '../../../abi/index.js';
import { CheckFailure, expect, type Check } from '../../check.js';
import { expectExit, expectNoLeak, MARKER, runHelix, swapper } from '../../kit/files-kit.js';
import { checkDefaultPolicy } from '../../runner.js';
import { counts, expectImportRefused, refusal, SECRET } from './shared.js';

/** The checks of this file, in the report's order. */
export const importChecks: readonly Check[] = [
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
];
