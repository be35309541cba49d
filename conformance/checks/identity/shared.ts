// What the identity checks share: calls on hosts of their own over a home, a policy written and
// loaded for such a host, and the edit pack, whose manifest, schemas and module the edit checks
// change one at a time to see which edits make a new run and which replay (ABI-RUNID-001..005).
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../../../abi/index.js';
import { createHost, type Host } from '../../../host/5-host/host.js';
import { loadPolicy, type LoadedPolicy } from '../../../host/5-host/toolpacks.js';
import { expectSuccess, type CheckContext } from '../../check.js';
import { echoModule } from '../../kit/guest-wat.js';
import { DEFAULT_LIMITS, writeToolpack, type ToolpackSpec } from '../../kit/toolpack.js';
import { checkDefaultPolicy } from '../../runner.js';

/** A run id as the ABI writes it. */
export const RUN_ID = /^run_[0-9a-f]{32}$/;

/** One call on `host`, parsed. */
export async function callOn(host: Host, tool: string, input: unknown, request: Record<string, unknown> = {}): Promise<ResponseEnvelope> {
  return ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input, ...request }));
}

/** Opens a host over `plugins` on `home` under `policy`, runs `body`, closes it. */
export async function withHost<T>(
  ctx: CheckContext,
  plugins: string,
  home: string,
  policy: LoadedPolicy,
  body: (h: Host) => Promise<T>,
): Promise<T> {
  const h = await createHost({ toolpacksDir: plugins, home, policy, warn: (l) => ctx.note(`host warning: ${l}`) });
  try {
    return await body(h);
  } finally {
    await h.close();
  }
}

/** The check's default policy written to a file of its own and loaded, for the extra hosts a check opens. */
export function ownPolicy(ctx: CheckContext, name: string, doc: Record<string, unknown> = checkDefaultPolicy(ctx.env)): LoadedPolicy {
  const file = path.join(ctx.env.dir, name);
  writeFileSync(file, stringify(doc));
  return loadPolicy(file);
}

/** The base toolpack of the edit checks: limits, an allowlist and a schema with a nested $ref. */
export interface EditPack {
  manifest: Record<string, unknown>;
  inSchema: Record<string, unknown>;
  common: Record<string, unknown>;
  moduleName?: string;
  module?: string;
}
/** The edit pack as the edit checks start from it. */
export const basePack = (): EditPack => ({
  manifest: { limits: { ...DEFAULT_LIMITS }, capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'log.emit'] } },
  inSchema: { type: 'object', title: 'edit input', properties: { s: { $ref: 'common.json' } } },
  common: { type: 'string', maxLength: 100, description: 'a string' },
});

/** Writes the edit pack afresh under `plugins`. */
export async function writeEditPack(plugins: string, p: EditPack): Promise<void> {
  rmSync(plugins, { recursive: true, force: true });
  const spec: ToolpackSpec = {
    id: 'identity.edit',
    dirName: 'pack',
    module: p.module ?? echoModule(),
    manifest: p.manifest,
    inputSchema: { $ref: 'schemas/in.json' },
  };
  const { manifestPath } = await writeToolpack(plugins, spec);
  const dir = path.dirname(manifestPath);
  mkdirSync(path.join(dir, 'schemas'));
  writeFileSync(path.join(dir, 'schemas', 'in.json'), JSON.stringify(p.inSchema));
  writeFileSync(path.join(dir, 'schemas', 'common.json'), JSON.stringify(p.common));
  if (p.moduleName !== undefined) {
    renameSync(path.join(dir, 'tool.wasm'), path.join(dir, p.moduleName));
    const text = readFileSync(manifestPath, 'utf8').replace('module: tool.wasm', `module: ${p.moduleName}`);
    writeFileSync(manifestPath, text);
  }
}

/** Calls identity.edit after each edit on one home; returns each variant's outcome. */
export async function runEdits(
  ctx: CheckContext,
  edits: ReadonlyArray<readonly [string, (p: EditPack) => void]>,
): Promise<{ base: ResponseEnvelope; results: Array<[string, ResponseEnvelope]> }> {
  const plugins = path.join(ctx.env.dir, 'edit-plugins');
  const home = path.join(ctx.env.dir, 'edit-home');
  const policy = ownPolicy(ctx, 'edit-policy.yaml');
  const input = { s: 'same input' };
  await writeEditPack(plugins, basePack());
  const base = await withHost(ctx, plugins, home, policy, (h) => callOn(h, 'identity.edit', input));
  expectSuccess(base);
  const results: Array<[string, ResponseEnvelope]> = [];
  for (const [what, edit] of edits) {
    const p = basePack();
    edit(p);
    await writeEditPack(plugins, p);
    results.push([what, await withHost(ctx, plugins, home, policy, (h) => callOn(h, 'identity.edit', input))]);
  }
  ctx.observe('base_run_id', base.run_id);
  ctx.observe('edits', Object.fromEntries(results.map(([w, r]) => [w, { run_id: r.run_id, replayed: r.replayed, status: r.status }])));
  return { base, results };
}

/** The parts of the edit pack an edit changes: the manifest's limits, its capabilities, the nested schema file, the manifest, the input schema, the pack itself. */
export const limitsOf = (p: EditPack): Record<string, unknown> => p.manifest.limits as Record<string, unknown>;
export const capsOf = (p: EditPack): Record<string, unknown> => p.manifest.capabilities as Record<string, unknown>;
export const commonProps = (p: EditPack): Record<string, unknown> => p.common;
export const manifestOf = (p: EditPack): Record<string, unknown> => p.manifest;
export const inSchemaOf = (p: EditPack): Record<string, unknown> => p.inSchema;
export const packOf = (p: EditPack): EditPack => p;

/** The edit that sets `key` of the part `of` picks out of the pack to `value`. */
export const setting =
  <T extends object>(of: (p: EditPack) => T, key: string, value: unknown) =>
  (p: EditPack): void => {
    (of(p) as Record<string, unknown>)[key] = value;
  };
