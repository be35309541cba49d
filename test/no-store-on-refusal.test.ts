// A command refused for its arguments makes no store: each `helix` subcommand that opens one,
// run by the built CLI in an empty directory with a bad argument, exits with a specific error
// and leaves neither ./.helix nor the --home it was given. A read of what only a store can hold
// (a run, an artifact) in a home without one says so, and makes none either.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
const work = tempDir('helix-no-store-');
afterAll(() => work.cleanup());

const RUN = 'run_00000000000000000000000000000000';
const ART = 'art_01M8C13HYYPNBWE4C5WXCQW3AD';
const GC = '{"sequence":"ACGT"}';

/** Each command line, and the code its refusal names (on stderr, or in the response envelope on stdout). */
const REFUSED: readonly [string[], string][] = [
  [['runs', 'list', '--status', 'bogus'], 'I-REQ-ENVELOPE'],
  [['runs', 'list', '--limit', 'abc'], "option '--limit <n>' argument 'abc' is invalid"],
  [['runs', 'show', 'notarun'], 'I-REQ-INPUT'],
  [['runs', 'show', RUN], 'P-PRECOND-RUN-NOT-FOUND'],
  [['runs', 'export', RUN, 'crate'], 'P-PRECOND-RUN-NOT-FOUND'],
  [['verify', 'notarun'], 'I-REQ-INPUT'],
  [['verify', RUN], 'P-PRECOND-RUN-NOT-FOUND'],
  [['artifact', 'import'], 'I-REQ-ENVELOPE'],
  [['artifact', 'import', 'missing.txt'], 'P-PRECOND-PATH'],
  [['artifact', 'import', '/etc/hostname'], 'A-AUTH-PATH-OUTSIDE-ROOTS'],
  [['artifact', 'import', '.'], 'P-PRECOND-PATH'],
  [['artifact', 'import', 'f.txt', '--type', 'Bad Type'], 'I-REQ-INPUT'],
  [['artifact', 'import', '--text', 'hi', '--label', 'x'.repeat(300)], 'I-REQ-INPUT'],
  [['artifact', 'export', 'notanid', 'out.txt'], 'I-REQ-INPUT'],
  [['artifact', 'export', ART, 'out.txt'], 'P-PRECOND-ARTIFACT-NOT-FOUND'],
  [['artifact', 'show', ART], 'P-PRECOND-ARTIFACT-NOT-FOUND'],
  [['gc', '--dry-run', '--compact'], 'I-REQ-ENVELOPE'],
  [['call', 'no.such', '--input', '{}'], 'C-CONTRACT-TOOL-UNKNOWN'],
  [['call', 'seq.gc_content', '--input', GC, '--version-range', '9.x'], 'C-CONTRACT-VERSION-NO-MATCH'],
  [['call', 'seq.gc_content', '--input', GC, '--version-range', 'not a range'], 'I-REQ-ENVELOPE'],
  [['call', 'seq.gc_content', '--input', GC, '--idempotency-key', 'short'], 'I-REQ-ENVELOPE'],
  [['call', 'seq.gc_content', '--input', GC, '--toolpacks', 'missing'], 'P-PRECOND-PLUGINS-DIR'],
  [['serve', '--toolpacks', 'missing'], 'P-PRECOND-PLUGINS-DIR'],
  [['job', 'bundle', 'seq.gc_content', '--input', GC, '--dir', 'f.txt'], 'I-REQ-TARGET-NOT-EMPTY'],
  [['job', 'bundle', 'no.such', '--input', GC, '--dir', 'out'], 'C-CONTRACT-TOOL-UNKNOWN'],
  [
    ['job', 'submit', 'seq.gc_content', '--input', GC, '--dir', 'out', '--over', '/sequence', '--artifacts', '', '--no-submit'],
    'I-REQ-JOB-ARRAY',
  ],
  [
    ['job', 'submit', 'seq.gc_content', '--input', GC, '--dir', 'out', '--over', '/sequence', '--artifacts', ART, '--no-submit'],
    'I-REQ-JOB-ARRAY',
  ],
  [['job', 'collect', 'missing'], 'I-REQ-JOB-BUNDLE'],
];

async function helix(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const env = { ...process.env };
  delete env.HELIX_HOME;
  try {
    const r = await run(process.execPath, [cli, ...args], { cwd, env, timeout: 60_000 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe('a command refused for its arguments makes no store', () => {
  for (const [args, code] of REFUSED) {
    it(`helix ${args.join(' ').slice(0, 90)}`, async () => {
      const cwd = mkdtempSync(path.join(work.dir, 'cwd-'));
      writeFileSync(path.join(cwd, 'f.txt'), 'hello\n');
      const plain = await helix(args, cwd);
      expect(plain.code, plain.out).not.toBe(0);
      expect(plain.out).toContain(code);
      expect(existsSync(path.join(cwd, '.helix')), plain.out).toBe(false);
      // The same with --home: not even its parent is made.
      const home = path.join(cwd, 'home', 'nested');
      const withHome = await helix([...args, '--home', home], cwd);
      expect(withHome.out).toContain(code);
      expect(existsSync(path.join(cwd, 'home')), withHome.out).toBe(false);
      rmSync(cwd, { recursive: true, force: true });
    }, 120_000);
  }

  it('while the same commands with good arguments make one', async () => {
    const cwd = mkdtempSync(path.join(work.dir, 'cwd-'));
    writeFileSync(path.join(cwd, 'f.txt'), 'hello\n');
    const imported = await helix(['artifact', 'import', '-q', 'f.txt'], cwd);
    expect(imported.code, imported.out).toBe(0);
    expect(existsSync(path.join(cwd, '.helix', 'helix.mdb'))).toBe(true);
    const called = await helix(['call', 'seq.gc_content', '--input', GC, '--home', 'home'], cwd);
    expect(called.code, called.out).toBe(0);
    expect(existsSync(path.join(cwd, 'home', 'helix.mdb'))).toBe(true);
  }, 120_000);
});
