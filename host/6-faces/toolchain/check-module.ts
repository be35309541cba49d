// Build-time check of a compiled module against its manifest's ABI, so an import the host
// would refuse at load (AssemblyScript's env.abort, say) fails the build with a fix instead.

import type { ManifestBuildFields } from './manifest-digest.js';

/** The imports helix/v1 allows: capability_call, and capability_call_bulk under capability ABI 2 (ABI-IMPORT-001). */
const HELIX_IMPORTS = ['capability_call', 'capability_call_bulk'] as const;

/** Exports every helix/v1 module must have, besides its entrypoint. */
const HELIX_EXPORTS: ReadonlyArray<readonly [string, WebAssembly.ImportExportKind]> = [
  ['memory', 'memory'],
  ['alloc', 'function'],
  ['dealloc', 'function'],
];

/** Problems with `bytes` as a module for `manifest` (empty when it fits), each with a fix. */
export function checkModule(
  bytes: Uint8Array,
  manifest: Pick<ManifestBuildFields, 'abi' | 'entrypoint'> & Partial<Pick<ManifestBuildFields, 'capabilityAbiVersion'>>,
): string[] {
  let module: WebAssembly.Module;
  try {
    module = new WebAssembly.Module(bytes);
  } catch (error) {
    return [`the module does not validate: ${(error as Error).message}`];
  }
  const imports = WebAssembly.Module.imports(module);
  const exports = new Map(WebAssembly.Module.exports(module).map((entry) => [entry.name, entry.kind]));
  const problems: string[] = [];
  if (exports.get(manifest.entrypoint) !== 'function') {
    problems.push(`entrypoint ${manifest.entrypoint} is not an exported function`);
  }
  if (manifest.abi === 'extism/v1') return problems;

  for (const [name, kind] of HELIX_EXPORTS) {
    if (exports.get(name) !== kind) problems.push(`missing export ${name} (${kind}); re-export it from @helix/sdk-as`);
  }
  const bulk = manifest.capabilityAbiVersion === 2;
  for (const entry of imports) {
    const ours = entry.module === 'helix_v1' && entry.kind === 'function' && (HELIX_IMPORTS as readonly string[]).includes(entry.name);
    if (ours && (bulk || entry.name === 'capability_call')) continue;
    if (ours) {
      problems.push(
        `import helix_v1.capability_call_bulk (the bulk path, capability ABI 2) needs capabilities.abiVersion: 2 in the manifest; set it there (ABI-BULK-001)`,
      );
      continue;
    }
    const hint =
      entry.module === 'env' && entry.name === 'abort'
        ? 'route abort to the SDK: extend @helix/sdk-as/asconfig.json or pass --use abort=~lib/@helix/sdk-as/assembly/panic/helixAbort'
        : `helix/v1 modules may import only helix_v1.capability_call${bulk ? ' and helix_v1.capability_call_bulk' : ''} (avoid trace, Math.random, Date and console)`;
    problems.push(`forbidden import ${entry.module}.${entry.name} (${entry.kind}): ${hint}`);
  }
  return problems;
}
