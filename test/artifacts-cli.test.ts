// `helix artifact ...` run as a real child process from the built package, with its own home
// and a policy whose roots are a temporary directory.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactRecordSchema, type ArtifactRecord } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function helix(args: string[], options: { uid?: number; gid?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: packageRoot(), ...options }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

let t: { dir: string; cleanup: () => void };
let root: string;
let data: string;
let out: string;
let home: string;
let policyFile: string;
let content: Buffer;
beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npx tsc -p .\` before this test`);
  t = tempDir('helix-artifact-cli-');
  root = realpathSync(t.dir);
  data = path.join(root, 'data');
  out = path.join(root, 'out');
  home = path.join(root, 'home');
  mkdirSync(data);
  mkdirSync(out);
  policyFile = path.join(root, 'policy.yaml');
  writeFileSync(
    policyFile,
    `version: 1\ntools:\n  allow: []\nceilings:\n  maxImportBytes: 4000000\npaths:\n  importRoots: [${JSON.stringify(data)}]\n  exportRoots: [${JSON.stringify(out)}]\n`,
  );
  content = Buffer.concat([
    Buffer.from('>chr1\nACGT\n'),
    Buffer.from(
      randomBytes(2_500_000)
        .toString('base64')
        .replace(/[^A-Za-z]/g, 'A')
        .replace(/(.{70})/g, '$1\n'),
    ),
    Buffer.from('\n'),
  ]);
  writeFileSync(path.join(data, 'genome.fa'), content);
});
afterAll(() => t?.cleanup());

const withStore = (args: string[]): string[] => [...args, '--home', home, '--policy', policyFile];

describe('helix artifact', () => {
  let imported: ArtifactRecord;

  it('helix artifact import prints the record as JSON and exits 0', async () => {
    const r = await helix(withStore(['artifact', 'import', path.join(data, 'genome.fa'), '--label', 'test genome']));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    imported = ArtifactRecordSchema.parse(JSON.parse(r.stdout));
    expect(imported).toMatchObject({
      type: 'fasta',
      size: content.length,
      label: 'test genome',
      source: { kind: 'import', path: path.join(data, 'genome.fa') },
    });
    expect(imported.preview.records![0]!.id).toBe('chr1');
  });

  it('helix artifact list prints a table, or JSON with --json, honouring --limit', async () => {
    await helix(withStore(['artifact', 'import', path.join(data, 'genome.fa'), '--type', 'text']));
    const table = await helix(withStore(['artifact', 'list']));
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+SIZE\s+CREATED\s+LABEL$/);
    expect(lines[1]).toMatch(new RegExp(`^${imported.id}\\s+fasta\\s+\\d+\\.\\d MiB\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+test genome$`));
    expect(lines).toHaveLength(3);
    const json = await helix(withStore(['artifact', 'list', '--json', '--limit', '1']));
    expect(JSON.parse(json.stdout)).toEqual([imported]);
    const bad = await helix(withStore(['artifact', 'list', '--limit', 'many']));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a positive integer/);
  });

  it('helix artifact show prints the record and exits 2 on a malformed id', async () => {
    const r = await helix(withStore(['artifact', 'show', imported.id]));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(imported);
    const bad = await helix(withStore(['artifact', 'show', 'not-an-id']));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^helix: I-REQ-INPUT: /);
    const missing = await helix(withStore(['artifact', 'show', 'art_00000000000000000000000000']));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/P-PRECOND-ARTIFACT-NOT-FOUND/);
  });

  it('helix artifact export writes identical bytes and refuses to overwrite without --overwrite', async () => {
    const dest = path.join(out, 'genome.copy.fa');
    const r = await helix(withStore(['artifact', 'export', imported.id, dest]));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ id: imported.id, path: dest, bytes: content.length });
    expect(readFileSync(dest).equals(content)).toBe(true);
    const again = await helix(withStore(['artifact', 'export', imported.id, dest]));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/P-PRECOND-PATH: .*the file already exists/);
    expect((await helix(withStore(['artifact', 'export', imported.id, dest, '--overwrite']))).code).toBe(0);
  });

  it('helix artifact import refuses a path outside the roots, exits 1 and stores nothing', async () => {
    const before = JSON.parse((await helix(withStore(['artifact', 'list', '--json']))).stdout) as unknown[];
    const r = await helix(withStore(['artifact', 'import', policyFile]));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^helix: A-AUTH-PATH-OUTSIDE-ROOTS: Cannot import .*policy\.yaml: it is outside the import roots/);
    expect(r.stderr).toMatch(/\nhint: /);
    const after = JSON.parse((await helix(withStore(['artifact', 'list', '--json']))).stdout) as unknown[];
    expect(after).toHaveLength(before.length);
  });

  it('helix artifact import exits 2 for a file over the policy ceiling and 3 for an invalid policy', async () => {
    writeFileSync(path.join(data, 'big.bin'), Buffer.alloc(4_000_001));
    const big = await helix(withStore(['artifact', 'import', path.join(data, 'big.bin')]));
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/I-REQ-TOO-LARGE: .*big\.bin: it is 4000001 bytes, above the import limit of 4000000 bytes/);
    const badPolicy = path.join(root, 'bad-policy.yaml');
    writeFileSync(badPolicy, 'version: 1\ntools: {}\npaths:\n  importRoot: []\n');
    const bad = await helix(['artifact', 'import', path.join(data, 'genome.fa'), '--home', home, '--policy', badPolicy]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/P-PRECOND-POLICY-INVALID/);
  });

  it('helix artifact import refuses a file the user may not read', async () => {
    const locked = path.join(data, 'locked.txt');
    writeFileSync(locked, 'private\n');
    chmodSync(locked, 0o000);
    const asRoot = process.getuid?.() === 0;
    let unprivileged: { uid?: number; gid?: number } = {};
    let userHome = home;
    if (asRoot) {
      // Root reads mode-000 files, so the import runs as `nobody`, with a home it may write in.
      unprivileged = { uid: 65534, gid: 65534 };
      userHome = path.join(root, 'nobody-home');
      mkdirSync(userHome);
      chownSync(userHome, 65534, 65534);
      for (const dir of [root, data]) chmodSync(dir, 0o755);
    }
    const r = await helix(['artifact', 'import', locked, '--home', userHome, '--policy', policyFile], unprivileged);
    expect(r.stderr).toMatch(/^helix: P-PRECOND-PATH: Cannot import .*locked\.txt: it cannot be opened for reading: permission denied/);
    expect(r.code).toBe(1);
    // The same file is readable by root, which shows the refusal came from the permission alone.
    if (asRoot) closeSync(openSync(locked, 'r'));
  });

  it('helix artifact import --text stores inline text, and refuses a path and --text together', async () => {
    const r = await helix(withStore(['artifact', 'import', '--text', '>r1\nACGT\n', '--label', 'inline']));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'fasta', size: 9, label: 'inline', source: { kind: 'inline' } });
    const both = await helix(withStore(['artifact', 'import', path.join(data, 'genome.fa'), '--text', 'x']));
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exactly one of a path or --text/);
  });

  it('helix artifact import --quiet prints only the id of the artifact it stored', async () => {
    const quiet = await helix(withStore(['artifact', 'import', '--quiet', '--text', '>q1\nGATTACA\n', '--label', 'quiet']));
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/^art_[0-9A-HJKMNP-TV-Z]{26}\n$/);
    const shown = await helix(withStore(['artifact', 'show', quiet.stdout.trim()]));
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: quiet.stdout.trim(), type: 'fasta', size: 12, label: 'quiet' });
    const short = await helix(withStore(['artifact', 'import', '-q', path.join(data, 'genome.fa')]));
    expect(short.stdout.trim()).toMatch(/^art_/);
  });

  it('a command line refused before the store is needed leaves no store behind', async () => {
    const fresh = path.join(root, 'never-made');
    const r = await helix(['artifact', 'import', '--home', fresh, '--policy', policyFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^helix: I-REQ-ENVELOPE: Give exactly one of a path or --text\./);
    expect(existsSync(fresh)).toBe(false);
  });
});
