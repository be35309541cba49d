// Replay never hides an edit (ABI-RUNID-001..008), through the built CLI as an author works: the
// bundled fastq.filter toolpack copied to a temporary directory, called once, then each manifest
// field or schema file that can change what a call does is edited in turn, and the same call is a
// new run; an edit of a purely descriptive field (description, timeoutMs) still replays.
import { cpSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { CLI, runCli } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

let t: { dir: string; cleanup: () => void };
let root: string;
let pack: string;
let input: string;
const originals = new Map<string, string>();
const FILES = { manifest: 'fastq-filter.tool.yaml', input: 'schemas/input.json', output: 'schemas/output.json' } as const;
type File = keyof typeof FILES;

/** `helix call fastq.filter` on the copied pack, from the author's directory. */
async function call(): Promise<ResponseEnvelope> {
  const r = await runCli(
    ['call', 'fastq.filter', '--toolpacks', path.join(root, 'plugins'), '--home', path.join(root, 'home'), '--input', input],
    root,
  );
  expect(r.stderr, 'helix call printed no error').not.toMatch(/helix: [A-Z]-/);
  return ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
}

/** Puts every file of the pack back as it was, then replaces `from` by `to` in `file` (which must contain it once). */
function edit(file: File, from: string, to: string): void {
  for (const [f, text] of originals) writeFileSync(path.join(pack, f), text);
  const text = originals.get(FILES[file])!;
  expect(text.split(from).length, `${FILES[file]} contains ${from} once`).toBe(2);
  writeFileSync(path.join(pack, FILES[file]), text.replace(from, to));
}

let first: ResponseEnvelope;
const seen = new Set<string>();

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before this test`);
  t = tempDir('helix-identity-edits-');
  root = realpathSync(t.dir);
  pack = path.join(root, 'plugins', 'fastq-filter');
  cpSync(path.join(packageRoot(), 'plugins', 'fastq-filter'), pack, { recursive: true });
  for (const f of Object.values(FILES)) originals.set(f, readFileSync(path.join(pack, f), 'utf8'));
  // The default policy imports from the working directory: the author's.
  const imported = await runCli(['artifact', 'import', path.join(pack, 'data', 'reads.fq'), '--home', path.join(root, 'home')], root);
  expect(imported.code, imported.stderr).toBe(0);
  input = JSON.stringify({ reads: (JSON.parse(imported.stdout) as { id: string }).id, min_length: 20 });
  first = await call();
  expect(first).toMatchObject({ status: 'success', replayed: false });
  expect(await call()).toMatchObject({ status: 'success', replayed: true, run_id: first.run_id });
  seen.add(first.run_id!);
}, 120_000);
afterAll(() => t?.cleanup());

/** Calls again after the edit and expects a run never seen before, executed rather than replayed. */
async function expectNewRun(): Promise<ResponseEnvelope> {
  const r = await call();
  expect(r.replayed, JSON.stringify(r.warnings)).toBe(false);
  expect(r.run_id).toMatch(/^run_[0-9a-f]{32}$/);
  expect(seen.has(r.run_id!), `run ${r.run_id} is new`).toBe(false);
  seen.add(r.run_id!);
  return r;
}

describe('helix call after an edit of the toolpack', () => {
  it('is refused with the forbidden outcome once artifact.read leaves the allowlist, instead of replaying the success', async () => {
    edit('manifest', 'allow: [artifact.stat, artifact.read, artifact.write]', 'allow: [artifact.stat, artifact.write]');
    const r = await expectNewRun();
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'A-AUTH-FORBIDDEN' });
  }, 60_000);

  const edits: ReadonlyArray<readonly [string, File, string, string]> = [
    ['a declared output label', 'manifest', 'label: filtered reads', 'label: kept reads'],
    ['a declared output type', 'manifest', '    type: fastq', '    type: fq'],
    ['the fuel limit', 'manifest', 'fuel: 8000000000', 'fuel: 8000000001'],
    ['the memory limit', 'manifest', 'maxMemoryPages: 384', 'maxMemoryPages: 385'],
    ['the output ceiling', 'manifest', 'maxOutputBytes: 16384', 'maxOutputBytes: 16385'],
    ['the input ceiling', 'manifest', 'maxInputBytes: 4096', 'maxInputBytes: 4097'],
    ['the capability call ceiling', 'manifest', 'maxCapabilityCalls: 1000', 'maxCapabilityCalls: 1001'],
    ['deterministic', 'manifest', 'deterministic: idempotent', 'deterministic: pure'],
    ['the input schema file', 'input', '"maxLength": 200', '"maxLength": 199'],
    [
      'the output schema file',
      'output',
      '"records_out": { "type": "integer", "minimum": 0,',
      '"records_out": { "type": "integer", "minimum": 0, "maximum": 1000000000,',
    ],
  ];
  for (const [what, file, from, to] of edits) {
    it(`makes a new run after an edit of ${what}`, async () => {
      edit(file, from, to);
      await expectNewRun();
    }, 60_000);
  }

  const descriptive: ReadonlyArray<readonly [string, File, string, string]> = [
    ['the description', 'manifest', 'description: "Keeps the reads', 'description: "Keeps only the reads'],
    ['the deadline (timeoutMs)', 'manifest', 'timeoutMs: 120000', 'timeoutMs: 90000'],
    ['a schema title', 'input', '"title": "fastq.filter input"', '"title": "fastq.filter input, edited"'],
  ];
  for (const [what, file, from, to] of descriptive) {
    it(`replays the first run after an edit of ${what}`, async () => {
      edit(file, from, to);
      const r = await call();
      expect(r).toMatchObject({ status: 'success', replayed: true, run_id: first.run_id, output: first.output });
    }, 60_000);
  }
});
