// Compiled-module metadata by digest (DESIGN.md section 8): what each module loaded into this
// store was (size, exports, imports, proposals used, its instrumented form), so an operator can
// tell which exact build a run's module_digest names, long after the file is gone.
import { createHash } from 'node:crypto';
import type { LoadedTool } from '../loader/load-toolpacks.js';
import type { Store } from './open-store.js';

/** Records (or refreshes) the metadata of every loaded module, in one transaction. */
export async function recordModules(store: Store, tools: readonly LoadedTool[], now: number): Promise<void> {
  if (tools.length === 0) return;
  await store.root.transaction(() => {
    for (const t of tools) {
      const digest = t.manifest.digest;
      const previous = store.db.modules.get(digest);
      const info = t.module.info;
      store.db.modules.put(digest, {
        digest,
        size: t.module.bytes.length,
        abi: t.manifest.abi,
        tools: [...new Set([...((previous?.tools as string[] | undefined) ?? []), `${t.manifest.id}@${t.manifest.version}`])].sort(),
        exports: info.exports.map((e) => `${e.kind} ${e.name}`),
        imports: info.imports.map((i) => `${i.kind} ${i.module}.${i.name}`),
        features: info.features,
        instrumented: { sha256: createHash('sha256').update(t.module.instrumented.bytes).digest('hex'), max_memory_pages: t.limits.maxMemoryPages, recyclable: t.module.instrumented.recyclable },
        first_loaded_at: (previous?.first_loaded_at as number | undefined) ?? now,
        last_loaded_at: now,
      });
    }
  });
}
