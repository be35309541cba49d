// Writes throwaway toolpacks (manifest, schemas, module) into temporary directories, so tests
// drive the real loader and engine with real modules.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { wat2wasm } from './wat.js';

/** A fresh temporary directory (under `parent`, default the OS temp dir), removed by the returned cleanup. */
export function tempDir(prefix = 'helix-test-', parent: string = tmpdir()): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(parent, prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** sha256:<hex> of bytes. */
export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A schema accepting any object. */
export const ANY_OBJECT = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' };

/** The limits of a toolpack written here, unless its manifest fields say otherwise. */
export const DEFAULT_LIMITS = { maxInputBytes: 65536, maxOutputBytes: 65536, fuel: 100_000_000, maxMemoryPages: 16 } as const;

/** What a test toolpack is made of; the manifest fields override sensible defaults. */
export interface ToolpackSpec {
  readonly id: string;
  /** WAT source, or module bytes. */
  readonly module: string | Uint8Array;
  readonly manifest?: Record<string, unknown>;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  /** Sub-directory name; default the id. */
  readonly dirName?: string;
}

/** A toolpack a check loads: the kit's spec, with the text of the module for the report. */
export interface PackSpec extends ToolpackSpec {
  /** AssemblyScript guest under conformance/assembly (instead of `module`'s WAT). */
  readonly guest?: string;
  /** Further files written into the pack's directory, by name. */
  readonly extraFiles?: Readonly<Record<string, string | Uint8Array>>;
}

/**
 * A toolpack of `module` whose manifest fields are `fields` (an ABI's own) and then `manifest`;
 * without a manifest at all when both are empty, so the kit's defaults stand.
 */
export function packWith(
  fields: Readonly<Record<string, unknown>>,
  id: string,
  module: string | Uint8Array,
  manifest: Record<string, unknown> = {},
  rest: Partial<PackSpec> = {},
): PackSpec {
  const all = { ...fields, ...manifest };
  return Object.keys(all).length === 0 ? { id, module, ...rest } : { id, module, ...rest, manifest: all };
}

/** Writes one toolpack under `root`; returns the manifest path and the module bytes. */
export async function writeToolpack(root: string, spec: ToolpackSpec): Promise<{ manifestPath: string; bytes: Uint8Array }> {
  const dir = path.join(root, spec.dirName ?? spec.id);
  mkdirSync(dir, { recursive: true });
  const bytes = typeof spec.module === 'string' ? await wat2wasm(spec.module, `${spec.id}.wat`) : spec.module;
  writeFileSync(path.join(dir, 'tool.wasm'), bytes);
  const manifest = {
    id: spec.id,
    version: '1.0.0',
    contractVersion: 'v1',
    description: `test tool ${spec.id}`,
    abi: 'helix/v1',
    module: 'tool.wasm',
    digest: digestOf(bytes),
    deterministic: 'pure',
    timeoutMs: 5000,
    limits: DEFAULT_LIMITS,
    capabilities: { abiVersion: 1, allow: [] },
    inputSchema: spec.inputSchema ?? ANY_OBJECT,
    outputSchema: spec.outputSchema ?? { type: 'object' },
    ...spec.manifest,
  };
  const manifestPath = path.join(dir, `${spec.id.replace(/\./g, '_')}.tool.yaml`);
  writeFileSync(manifestPath, stringify(manifest));
  return { manifestPath, bytes };
}

/** Writes several toolpacks into a new temporary toolpacks directory. */
export async function toolpacksDir(specs: readonly ToolpackSpec[]): Promise<{ dir: string; cleanup: () => void }> {
  const t = tempDir();
  for (const s of specs) await writeToolpack(t.dir, s);
  return t;
}
