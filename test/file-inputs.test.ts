// `helix call`'s "@file:PATH" (cli/file-inputs.ts): in a field the tool's input schema marks as
// an artifact, the file is imported under the policy's import roots, as `helix artifact import`
// does, and its id takes the string's place; any other field keeps the string. A real Host,
// store and module (an echo guest answers with the input it was given); one `helix call` process.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileFields, importFileFields } from '../cli/file-inputs.js';
import { isHelixError } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { echoModule } from './helpers/guest-wat.js';
import { tempDir, writeToolpack } from './helpers/toolpack.js';

const INPUT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['file'],
  properties: {
    file: { type: 'string', 'x-helix-artifact': true },
    more: { type: 'array', items: { type: 'object', properties: { reads: { type: 'string', 'x-helix-artifact': true } } } },
    note: { type: 'string' },
  },
};

const work = tempDir('helix-file-inputs-');
const data = path.join(work.dir, 'data');
const packs = path.join(work.dir, 'packs');
const policyFile = path.join(work.dir, 'policy.yaml');
let host: Host;
beforeAll(async () => {
  mkdirSync(data, { recursive: true });
  writeFileSync(path.join(data, 'a.txt'), 'first\n');
  writeFileSync(path.join(data, 'b.txt'), 'second\n');
  writeFileSync(path.join(work.dir, 'outside.txt'), 'not under the root\n');
  writeFileSync(policyFile, `version: 1\ntools: { allow: ['*'] }\npaths: { importRoots: ['${data}'] }\n`);
  await writeToolpack(packs, { id: 'files.echo', module: echoModule(), inputSchema: INPUT_SCHEMA });
  host = await createHost({ toolpacksDir: packs, policyFile, home: path.join(work.dir, 'home') });
});
afterAll(async () => {
  await host?.close();
  work.cleanup();
});

describe('"@file:PATH" in helix call', () => {
  it('finds the artifact fields that hold @file:, nested ones too, as the input schema marks them', () => {
    const input = { file: `@file:${data}/a.txt`, more: [{ reads: '@file:x' }, { reads: 'art_x' }], note: '@file:note' };
    expect(fileFields(host, 'files.echo', '*', input)).toEqual(['/file', '/more/0/reads']);
    // No @file: anywhere, an unknown tool, a version range no tool satisfies: nothing to import.
    expect(fileFields(host, 'files.echo', '*', { file: 'art_01M8C13HYYPNBWE4C5WXCQW3AD' })).toEqual([]);
    expect(fileFields(host, 'no.such_tool', '*', input)).toEqual([]);
    expect(fileFields(host, 'files.echo', '9.x', input)).toEqual([]);
  });

  it('imports each file as an import and calls with the ids; a field that is not an artifact keeps the string', async () => {
    const input = { file: `@file:${data}/a.txt`, more: [{ reads: `@file:${data}/b.txt` }], note: `@file:${data}/a.txt` };
    const resolved = await importFileFields(host, 'files.echo', '*', input);
    expect(resolved.imports.map((i) => [i.field, i.path])).toEqual([
      ['/file', `${data}/a.txt`],
      ['/more/0/reads', `${data}/b.txt`],
    ]);
    // The caller's object is left as it was.
    expect(input.file).toBe(`@file:${data}/a.txt`);
    const [a, b] = resolved.imports.map((i) => i.artifact_id);
    expect(resolved.input).toEqual({ file: a, more: [{ reads: b }], note: `@file:${data}/a.txt` });
    for (const [id, file, bytes] of [
      [a, 'a.txt', 6],
      [b, 'b.txt', 7],
    ] as const) {
      expect(host.artifacts.get(id!)).toMatchObject({ size: bytes, source: { kind: 'import', path: path.join(data, file) } });
    }
    const r = await host.call({ call_id: 'f1', tool_id: 'files.echo', input: resolved.input });
    expect(r).toMatchObject({ status: 'success', output: resolved.input });
  });

  it('refuses a file outside the import roots, or missing, with the import error, the field and the roots, storing nothing', async () => {
    const before = host.artifacts.list().length;
    const refusal = async (file: string) => {
      try {
        await importFileFields(host, 'files.echo', '*', { file: `@file:${file}` });
      } catch (err) {
        if (isHelixError(err)) return err;
      }
      throw new Error('not refused');
    };
    const outside = await refusal(path.join(work.dir, 'outside.txt'));
    expect(outside.code).toBe('A-AUTH-PATH-OUTSIDE-ROOTS');
    expect(outside.details).toMatchObject({ field: '/file', roots: [data] });
    expect(outside.message).toContain('is outside the import roots');
    expect(outside.hint).toContain(`under the policy's import roots (${data})`);
    const missing = await refusal(path.join(data, 'none.txt'));
    expect(missing).toMatchObject({ code: 'P-PRECOND-PATH', details: { field: '/file', reason: 'it does not exist' } });
    const directory = await refusal(data);
    expect(directory.code).toBe('P-PRECOND-PATH');
    expect(host.artifacts.list().length).toBe(before);
  });

  it('helix call prints the refusal as its response (run_id null), exit 1, and the import that passes on stderr', async () => {
    const home = path.join(work.dir, 'cli-home');
    const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
    const args = ['call', 'files.echo', '--toolpacks', packs, '--policy', policyFile, '--home', home, '--compact', '--input'];
    const outside = await promisify(execFile)(process.execPath, [
      cli,
      ...args,
      JSON.stringify({ file: `@file:${work.dir}/outside.txt` }),
    ]).catch((e: { code: number; stdout: string }) => e);
    expect('code' in outside ? outside.code : 0).toBe(1);
    const response = JSON.parse(outside.stdout) as { status: string; error: { code: string; hint: string }; run_id: unknown };
    expect(response).toMatchObject({ status: 'terminal_error', error: { code: 'A-AUTH-PATH-OUTSIDE-ROOTS' }, run_id: null });
    expect(response.error.hint).toContain(data);
    const ok = await promisify(execFile)(process.execPath, [cli, ...args, JSON.stringify({ file: `@file:${data}/a.txt` })]);
    expect(ok.stderr).toMatch(new RegExp(`^helix: imported ${data}/a\\.txt as art_\\w{26} for /file$`, 'm'));
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'success', output: { file: expect.stringMatching(/^art_/) } });
    expect(existsSync(home)).toBe(true);
  });
});
