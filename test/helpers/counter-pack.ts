// An AssemblyScript toolpack written the way an author writes one (`helix new`, then the source,
// schemas, manifest and fixtures replaced), built with `helix build`: it counts its calls in kv,
// and on `{"op":"fetch"}` asks for a web page its manifest does not allow (http.request).
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI } from './run-cli.js';

const run = promisify(execFile);

const SOURCE = `// counter.tool: counts its calls in kv; asks for a web page it is not allowed to fetch.
import { Http, JSONObject, Kv, Result, run } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

function handle(input: JSONObject): Result {
  const op = input.getString("op");
  if (op == "fetch") {
    const r = Http.get("https://example.org/");
    return Result.ok(new JSONObject().setBool("fetched", r.ok).setString("code", r.errorCode));
  }
  let n: i64 = 0;
  const got = Kv.get("count");
  if (got !== null && got.ok) {
    const o = got.object;
    if (o !== null) n = o.getInteger("n");
  }
  n += 1;
  Kv.put("count", new JSONObject().setInteger("n", n));
  return Result.ok(new JSONObject().setInteger("count", n));
}
`;

const MANIFEST = `id: counter.tool
version: 0.1.0
contractVersion: v1
description: "Counts its calls in kv."
abi: helix/v1
module: build/counter-tool.wasm
entrypoint: execute
digest: ""
deterministic: pure
timeoutMs: 5000
limits:
  maxInputBytes: 4096
  maxOutputBytes: 4096
  fuel: 60000000
  maxMemoryPages: 48
  maxCapabilityCalls: 8
capabilities:
  abiVersion: 1
  allow: [kv.get, kv.put]
inputSchema:
  $ref: schemas/input.json
outputSchema:
  $ref: schemas/output.json
declaredOutputs: []
health:
  fixtures: fixtures
`;

const INPUT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['op'],
  properties: { op: { enum: ['count', 'fetch'] }, note: { type: 'string' } },
};
const OUTPUT_SCHEMA = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' };

/** The counter pack's source file, relative to the pack. */
export const COUNTER_SOURCE = 'assembly/index.ts';

/** Makes and builds the counter pack as `<parent>/counter-tool`, with no fixtures; returns its directory. */
export async function makeCounterPack(parent: string): Promise<string> {
  mkdirSync(parent, { recursive: true });
  await run(process.execPath, [CLI, 'new', 'counter-tool', '--dir', parent]);
  const dir = path.join(parent, 'counter-tool');
  for (const f of readdirSync(path.join(dir, 'fixtures'))) rmSync(path.join(dir, 'fixtures', f));
  writeFileSync(path.join(dir, COUNTER_SOURCE), SOURCE);
  writeFileSync(path.join(dir, 'schemas', 'input.json'), JSON.stringify(INPUT_SCHEMA));
  writeFileSync(path.join(dir, 'schemas', 'output.json'), JSON.stringify(OUTPUT_SCHEMA));
  writeFileSync(path.join(dir, 'counter-tool.tool.yaml'), MANIFEST);
  await run(process.execPath, [CLI, 'build', dir], { maxBuffer: 16 << 20 });
  return dir;
}

/** Writes fixture files into a pack: name (without .json) to fixture. */
export function writeFixtures(dir: string, fixtures: Record<string, unknown>): void {
  for (const [name, body] of Object.entries(fixtures))
    writeFileSync(path.join(dir, 'fixtures', `${name}.json`), `${JSON.stringify(body, null, 2)}\n`);
}
