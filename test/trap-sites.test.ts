// Traps point at the author's code. AssemblyScript and C packs made by `helix new` in a temporary
// directory outside the repository, their sources replaced by handlers that fail on purpose,
// built and called through the built CLI: the terminal error names the source file and line.
// Extism plugins (WAT, on the real @extism/extism) name the export that trapped and the function.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { extismWat } from './helpers/extism-wat.js';
import { runCli } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { wat2wasm } from './helpers/wat.js';

const work = tempDir('helix-traps-');
afterAll(() => work.cleanup());

// The line of `marker` in `source`, 1-based.
const lineOf = (source: string, marker: string) => source.split('\n').findIndex((line) => line.includes(marker)) + 1;

async function call(dir: string, tool: string, input: unknown): Promise<ResponseEnvelope> {
  const r = await runCli(
    ['call', tool, '--toolpacks', '.', '--home', path.join(dir, '.home'), '--input', JSON.stringify(input), '--compact'],
    dir,
  );
  return ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
}

// The handlers below take their own inputs, not the template's artifact reference.
const ANY_OBJECT = JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });

const AS_SOURCE = `import { JSONObject, Result, run } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  const mode = input.getString("sequence");
  assert(mode != "A", "no A allowed"); // ASSERT
  if (mode == "C") throw new Error("no C either"); // THROW
  const counts = new Array<i32>(2);
  if (mode == "G" && counts[7] == 3) return Result.ok(new JSONObject()); // INDEX
  return Result.ok(new JSONObject());
}
`;

const C_SOURCE = `#define HELIX_IMPLEMENTATION
#include "helix.h"

static helix_result handle(const helix_value *input) {
  const helix_value *text = helix_get(input, "text");
  HELIX_ASSERT(text && text->length < 3); /* ASSERT */
  helix_writer w;
  helix_w_init(&w);
  helix_w_begin_object(&w);
  helix_w_end_object(&w);
  return helix_ok_writer(&w);
}

HELIX_TOOL(handle)
`;

describe('an AssemblyScript pack that aborts', () => {
  const dir = path.join(work.dir, 'panic-as');
  beforeAll(async () => {
    expect((await runCli(['new', 'panic-as'], work.dir)).code).toBe(0);
    writeFileSync(path.join(dir, 'assembly/index.ts'), AS_SOURCE);
    writeFileSync(path.join(dir, 'schemas/input.json'), ANY_OBJECT);
    const built = await runCli(['build'], dir);
    expect(built.code, built.stderr).toBe(0);
  }, 180_000);

  it.each([
    ['an assertion', 'A', 'no A allowed', 'ASSERT'],
    ['a throw', 'C', 'no C either', 'THROW'],
  ])(
    'the trap of %s names assembly/index.ts and its line, in the message and in details.source',
    async (_, sequence, text, marker) => {
      const line = lineOf(AS_SOURCE, marker);
      const r = await call(dir, 'panic.as', { sequence });
      expect(r.status).toBe('terminal_error');
      expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { export: 'execute', source: { file: 'assembly/index.ts', line } } });
      expect(r.error!.message).toMatch(
        new RegExp(`^The tool trapped in execute: unreachable \\(${text} at assembly/index\\.ts:${line}:\\d+\\)\\.$`),
      );
    },
    60_000,
  );

  it('an index out of range names the standard library line, and with "debug": true the author function that called it', async () => {
    const plain = await call(dir, 'panic.as', { sequence: 'G' });
    expect(plain.error!.message).toMatch(/^The tool trapped in execute: unreachable \(Index out of range at ~lib\/array\.ts:\d+:\d+\)\.$/);
    const config = JSON.parse(readFileSync(path.join(dir, 'asconfig.json'), 'utf8')) as { options: Record<string, unknown> };
    writeFileSync(path.join(dir, 'asconfig.json'), JSON.stringify({ ...config, options: { ...config.options, debug: true } }));
    expect((await runCli(['build'], dir)).code).toBe(0);
    const named = await call(dir, 'panic.as', { sequence: 'G' });
    expect(named.error!.message).toMatch(/\(Index out of range at ~lib\/array\.ts:\d+:\d+, called from assembly\/index\/handle\)\.$/);
    expect(named.error).toMatchObject({
      details: {
        called_from: 'assembly/index/handle',
        frames: expect.arrayContaining([expect.stringMatching(/^assembly\/index\/handle \(wasm-function\[\d+\]\)$/)]),
      },
    });
  }, 120_000);
});

describe('a C pack whose HELIX_ASSERT fails', () => {
  const dir = path.join(work.dir, 'panic-c');
  beforeAll(async () => {
    expect((await runCli(['new', 'panic-c', '--lang', 'c'], work.dir)).code).toBe(0);
    writeFileSync(path.join(dir, 'src/main.c'), C_SOURCE);
    writeFileSync(path.join(dir, 'schemas/input.json'), ANY_OBJECT);
    const built = await runCli(['build'], dir);
    expect(built.code, built.stderr).toBe(0);
  }, 120_000);

  it('the trap names src/main.c and the line of the assertion', async () => {
    const line = lineOf(C_SOURCE, 'ASSERT */');
    const r = await call(dir, 'panic.c', { text: 'long text' });
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { export: 'execute', source: { file: 'src/main.c', line } } });
    expect(r.error!.message).toContain(`assertion failed: text && text->length < 3 at src/main.c:${line}`);
    expect(readFileSync(path.join(dir, 'src/main.c'), 'utf8')).toBe(C_SOURCE);
  }, 60_000);
});

describe('an Extism plugin that traps', () => {
  const limits = { maxInputBytes: 65_536, maxOutputBytes: 65_536, fuel: 100_000_000, maxMemoryPages: 16, maxCapabilityCalls: 10 };
  const source = extismWat('(call $deep) (i32.const 0)', { extra: '(func $deep unreachable)' });
  const direct = extismWat('unreachable');
  const home = tempDir('helix-traps-home-');
  let plugins: { dir: string; cleanup: () => void };
  let host: Host;
  beforeAll(async () => {
    plugins = await toolpacksDir([
      {
        id: 'x.named',
        module: await wat2wasm(source, 'named.wat', { names: true }),
        manifest: { abi: 'extism/v1', entrypoint: 'run', limits },
      },
      { id: 'x.unnamed', module: await wat2wasm(source, 'unnamed.wat'), manifest: { abi: 'extism/v1', entrypoint: 'run', limits } },
      { id: 'x.direct', module: await wat2wasm(direct, 'direct.wat'), manifest: { abi: 'extism/v1', entrypoint: 'run', limits } },
    ]);
    host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    plugins?.cleanup();
    home.cleanup();
  });
  const trap = async (tool: string) => (await host.call({ call_id: `c-${tool}`, tool_id: tool, tool_version: '*', input: {} })).error;

  it('the message names the export the host called and the function from the name section', async () => {
    expect(await trap('x.named')).toMatchObject({
      code: 'S-TOOL-TRAP',
      message: 'The tool trapped in run: unreachable, at deep (wasm-function[9]).',
      details: { export: 'run', function: 'deep', wasm_function: 9, frames: ['deep (wasm-function[9])', 'run (wasm-function[10])'] },
    });
  }, 60_000);

  it('without a name section the function is its index, and an exported one goes by its export name', async () => {
    expect(await trap('x.unnamed')).toMatchObject({
      message: 'The tool trapped in run: unreachable, at wasm-function[9].',
      details: { export: 'run', wasm_function: 9 },
    });
    expect(await trap('x.direct')).toMatchObject({
      message: 'The tool trapped in run: unreachable, at run (wasm-function[9]).',
      details: { export: 'run', function: 'run' },
    });
  }, 60_000);
});
