// Test helpers for the C SDK: writes C toolpacks (a program from programs/, a manifest and
// schemas) into a temporary toolpacks directory, builds them with the real build (clang against
// helix.h), and starts a real host on them.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { getArtifact } from '../../../host/4-calls/artifacts/query.js';
import { buildToolpack } from '../../../host/6-faces/toolchain/build-toolpack.js';
import { hostStore } from '../../../host/5-host/host.js';
import { createHost, type Host } from '../../../host/index.js';
import { readBlobBytes } from '../../../host/3-store/blobs.js';

export const REPO = fileURLToPath(new URL('../../..', import.meta.url));
export const PROGRAMS = fileURLToPath(new URL('./programs', import.meta.url));

/** One C toolpack to write: its program file and manifest fields over the defaults. */
export interface CPackSpec {
  readonly id: string;
  readonly program: string;
  readonly manifest?: Record<string, unknown>;
}

/** Writes the pack (without building it) under `root`; returns its directory. */
export function writeCPack(root: string, spec: CPackSpec): string {
  const name = spec.id.replace(/[._]/g, '-');
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  cpSync(path.join(PROGRAMS, spec.program), path.join(dir, 'src', 'main.c'));
  const manifest = {
    id: spec.id,
    version: '1.0.0',
    contractVersion: 'v1',
    description: `C SDK test program ${spec.program}`,
    abi: 'helix/v1',
    module: `build/${name}.wasm`,
    entrypoint: 'execute',
    deterministic: 'idempotent',
    timeoutMs: 60000,
    limits: { maxInputBytes: 1048576, maxOutputBytes: 4194304, fuel: 4_000_000_000, maxMemoryPages: 256, maxCapabilityCalls: 2000 },
    capabilities: {
      abiVersion: 2,
      allow: ['artifact.stat', 'artifact.read', 'kv.get', 'kv.put', 'kv.delete', 'kv.list', 'log.emit', 'clock.now_unix'],
    },
    inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
    outputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema' },
    ...spec.manifest,
  };
  writeFileSync(path.join(dir, `${name}.tool.yaml`), stringify(manifest));
  return dir;
}

/** A temporary toolpacks directory with `specs` built, and a host serving them (under `policyYaml`, else the default policy). */
export async function startCHost(
  specs: readonly CPackSpec[],
  policyYaml?: string,
): Promise<{ host: Host; root: string; cleanup: () => Promise<void> }> {
  const root = mkdtempSync(path.join(tmpdir(), 'helix-c-sdk-'));
  const plugins = path.join(root, 'plugins');
  for (const spec of specs) await buildToolpack(writeCPack(plugins, spec));
  let policyFile: string | undefined;
  if (policyYaml !== undefined) {
    policyFile = path.join(root, 'policy.yaml');
    writeFileSync(policyFile, policyYaml);
  }
  const host = await createHost({
    toolpacksDir: plugins,
    home: path.join(root, 'home'),
    ...(policyFile === undefined ? {} : { policyFile }),
  });
  return {
    host,
    root,
    cleanup: async () => {
      await host.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The bytes of a stored artifact. */
export async function artifactBytes(host: Host, id: string): Promise<Buffer> {
  const record = getArtifact(hostStore(host), id);
  return readBlobBytes(hostStore(host), record.sha256, record.size + 1);
}

/** A file of the repository, as bytes. */
export function repoFile(relative: string): Buffer {
  return readFileSync(path.join(REPO, relative));
}
