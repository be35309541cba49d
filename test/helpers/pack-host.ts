// A real host over freshly built copies of bundled toolpacks, for the toolpacks' own tests:
// each pack is copied (without build/ and test/) into a temporary plugins/ folder, built from
// source there, and loaded by createHost with its own LMDB home, so tests neither depend on
// nor rewrite the repository's build output and digests. Shared by the bundled
// toolpacks' tests (plugins/*/test/).

import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResponseEnvelope, WireError } from '../../abi/index.js';
import { getArtifact, importInline } from '../../host/4-calls/artifacts/index.js';
import { buildToolpack } from '../../host/6-faces/toolchain/build-toolpack.js';
import { runFixtures, type FixtureResult } from '../../host/6-faces/devloop/run-fixtures.js';
import { hostStore } from '../../host/5-host/host.js';
import { createHost, type Host } from '../../host/index.js';
import { readBlobBytes } from '../../host/3-store/blobs.js';
import type { WasmTool } from '../../host/4-calls/tools/wasm-tool.js';

const REPO = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** A host with some bundled packs loaded, and helpers around it. */
export interface PackHost {
  readonly host: Host;
  /** The loaded toolpack with this id. */
  tool(id: string): WasmTool;
  /** Imports bytes or text as an artifact (gzip is detected from the bytes); returns its id. */
  put(data: string | Uint8Array, label?: string): Promise<string>;
  /** An artifact's stored bytes. */
  bytes(id: string): Promise<Buffer>;
  /** One call through host.call. */
  call(toolId: string, input: Record<string, unknown>): Promise<ResponseEnvelope>;
  /** The output of a call that must succeed, as the shape `T` its tool's output schema gives it. */
  ok<T = Record<string, unknown>>(toolId: string, input: Record<string, unknown>): Promise<T>;
  /** The error of a call that must fail. */
  error(toolId: string, input: Record<string, unknown>): Promise<WireError>;
  /** The pack's fixtures through the host's fixture runner. */
  fixtures(toolId: string): Promise<FixtureResult[]>;
  close(): Promise<void>;
}

/** Builds `packs` (folder names under plugins/) in a temporary tree and starts a host on them. */
export async function startPackHost(packs: readonly string[]): Promise<PackHost> {
  const root = await mkdtemp(path.join(tmpdir(), 'helix-packs-'));
  await symlink(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  for (const pack of packs) {
    const copy = path.join(root, 'plugins', pack);
    await cp(path.join(REPO, 'plugins', pack), copy, {
      recursive: true,
      filter: (source) => !['build', 'test'].includes(path.basename(source)),
    });
    await buildToolpack(copy);
  }
  const host = await createHost({ home: path.join(root, 'home'), toolpacksDir: path.join(root, 'plugins') });
  const tool = (id: string): WasmTool => {
    const found = host.tools().find((t): t is WasmTool => t.kind === 'wasm' && t.id === id);
    if (found === undefined) throw new Error(`toolpack ${id} is not loaded`);
    return found;
  };
  const call = (toolId: string, input: Record<string, unknown>) => host.call({ tool_id: toolId, input });
  return {
    host,
    tool,
    async put(data, label) {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      return (await importInline(hostStore(host), bytes, { label: label ?? 'test input', maxBytes: 1 << 30 })).id;
    },
    async bytes(id) {
      const record = getArtifact(hostStore(host), id);
      return readBlobBytes(hostStore(host), record.sha256, record.size + 1);
    },
    call,
    async ok<T>(toolId: string, input: Record<string, unknown>) {
      const response = await call(toolId, input);
      if (response.status !== 'success') throw new Error(`expected success, got ${response.status}: ${JSON.stringify(response.error)}`);
      return response.output as T;
    },
    async error(toolId, input) {
      const response = await call(toolId, input);
      if (response.status === 'success' || response.error === undefined)
        throw new Error(`expected an error, got ${JSON.stringify(response.output)}`);
      return response.error;
    },
    fixtures: (toolId) => runFixtures(host, tool(toolId)),
    async close() {
      await host.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
