// The AssemblyScript SDK's broker helper for Extism plugins (`@helix/sdk-as/extism`): a plugin
// built outside the repository as `helix new --lang extism` packs are, called through the real
// host, gets capability answers and reports its errors, hint included (ABI-EXTISM-004,
// ABI-EXTISM-008); and the SDK's index never reaches @extism/as-pdk, so helix/v1 packs need not.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { createHost, type Host } from '../host/index.js';
import { buildToolpack } from '../host/6-faces/toolchain/build-toolpack.js';
import { importEdges, sourceFiles } from './helpers/import-graph.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const ROOT = path.resolve(import.meta.dirname, '..');

// Stats the artifact named by `id`: its size as the output, a D-DATA-FORMAT error with details
// and a hint when it is empty, and the host's own error passed on when the call fails. The
// example of sdk-guest/assemblyscript/README.md's "Extism plugins", with its abort handler.
const PLUGIN = `
import { Host } from "@extism/as-pdk";
import { JSONObject, JSONParser, quote } from "@helix/sdk-as";
import { callCapability, fail, failWithError } from "@helix/sdk-as/extism";

// The manifest's \`entrypoint\`: 0 with the output set, or 1 with an error set.
export function run(): i32 {
  const input = changetype<JSONObject>(new JSONParser(Host.inputString()).parse());
  const answer = callCapability("artifact.stat", '{"artifact_id":' + quote(input.getString("id")!) + "}");
  if (!answer.ok) return failWithError(answer.error);
  const size = changetype<JSONObject>(answer.result).getInteger("size");
  if (size == 0) return fail("D-DATA-FORMAT", "the artifact is empty", new JSONObject().setInteger("size", 0), "pass a file with data");
  Host.outputString(new JSONObject().setInteger("size", size).toString());
  return 0;
}

function abortHandler(message: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  unreachable();
}
`;

const pack = tempDir('helix-sdk-extism-');
let plugins: { dir: string; cleanup: () => void };
const home = tempDir('helix-home-');
let host: Host;

beforeAll(async () => {
  // A pack in the OS temp folder, with no node_modules: the build finds the SDK and the as-pdk
  // where Helix is, as for a pack `helix new` made anywhere.
  mkdirSync(path.join(pack.dir, 'assembly'));
  writeFileSync(path.join(pack.dir, 'assembly', 'index.ts'), PLUGIN);
  writeFileSync(
    path.join(pack.dir, 'asconfig.json'),
    JSON.stringify({
      entries: ['assembly/index.ts'],
      options: { outFile: 'build/stat.wasm', runtime: 'incremental', optimizeLevel: 3, use: ['abort=assembly/index/abortHandler'] },
    }),
  );
  writeFileSync(
    path.join(pack.dir, 'stat.tool.yaml'),
    'id: x.stat\nversion: 0.1.0\ncontractVersion: v1\ndescription: stat\nabi: extism/v1\nmodule: build/stat.wasm\nentrypoint: run\n',
  );
  const built = await buildToolpack(pack.dir);
  const module = readFileSync(built.modulePath);
  const manifest = (allow: string[]) => ({
    abi: 'extism/v1',
    entrypoint: 'run',
    limits: { maxInputBytes: 4096, maxOutputBytes: 4096, fuel: 100_000_000, maxMemoryPages: 16, maxCapabilityCalls: 4 },
    capabilities: { abiVersion: 1, allow },
  });
  plugins = await toolpacksDir([
    { id: 'x.stat', module, manifest: manifest(['artifact.stat']) },
    { id: 'x.stat_denied', module, manifest: manifest([]) },
  ]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
}, 180_000);

afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
  pack.cleanup();
});

async function call(tool: string, input: Record<string, unknown>): Promise<ResponseEnvelope> {
  return ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input }));
}

describe('@helix/sdk-as/extism in a plugin', () => {
  it('callCapability returns the capability result', async () => {
    const art = await host.artifacts.importInline('ACGT\n', { label: 'four bases' });
    const r = await call('x.stat', { id: art.id });
    expect({ status: r.status, output: r.output }).toEqual({ status: 'success', output: { size: 5 } });
  });

  it('fail sets the taxonomy error with its details and hint', async () => {
    const art = await host.artifacts.importInline('', { label: 'empty' });
    const r = await call('x.stat', { id: art.id });
    expect(r.error).toEqual({
      code: 'D-DATA-FORMAT',
      message: 'the artifact is empty',
      details: { size: 0 },
      hint: 'pass a file with data',
    });
  });

  it("failWithError passes the host's error on: an unknown artifact, a capability the manifest does not allow", async () => {
    const unknown = await call('x.stat', { id: 'art_00000000000000000000000000' });
    expect(unknown.error?.code).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
    const denied = await call('x.stat_denied', { id: 'art_00000000000000000000000000' });
    expect({ code: denied.error?.code, message: denied.error?.message }).toEqual({ code: 'A-AUTH-FORBIDDEN', message: 'forbidden' });
  });
});

describe('the SDK index and @extism/as-pdk', () => {
  const sdkDir = 'sdk-guest/assemblyscript';
  const files = [`${sdkDir}/index.ts`, `${sdkDir}/extism.ts`, ...sourceFiles(ROOT, [`${sdkDir}/assembly`])];
  const edges = importEdges(ROOT, files);
  const reach = (entry: string): Set<string> => {
    const seen = new Set([entry]);
    const todo = [entry];
    while (todo.length > 0) {
      const from = todo.pop();
      for (const e of edges) {
        if (e.from !== from || seen.has(e.to)) continue;
        seen.add(e.to);
        todo.push(e.to);
      }
    }
    return seen;
  };
  const usesPdk = (files: Set<string>) =>
    [...files].filter((f) => /from\s+["']@extism\/as-pdk/.test(readFileSync(path.join(ROOT, f), 'utf8')));

  it('the Extism entry reaches the as-pdk (so the check below can see it)', () => {
    expect(usesPdk(reach(`${sdkDir}/extism.ts`))).toEqual([`${sdkDir}/assembly/extism.ts`]);
  });

  it('the index, which helix/v1 packs import, never does', () => {
    const reached = reach(`${sdkDir}/index.ts`);
    expect(reached.size).toBeGreaterThan(20);
    expect(usesPdk(reached)).toEqual([]);
  });
});
