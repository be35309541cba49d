// Compiled-module metadata by digest (README "Runs, artifacts and provenance"): what each module
// loaded into this store was (size, exports, imports, proposals used, its instrumented form), so an
// operator can tell which exact build a run's module_digest names, long after the file is gone.
import { createHash } from 'node:crypto';
import { isHelixError } from '../../abi/index.js';
import type { LoadedTool } from '../loader/load-toolpacks.js';
import { appendAudit } from './audit.js';
import { commitBlob, writeChunks } from './blobs.js';
import type { Store } from './open-store.js';
import { readRecord } from './records.js';

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * The module's record as stored, or undefined. A damaged one is rebuilt from the module at hand
 * rather than stopping every host start; the audit trail keeps what was wrong with it.
 */
function previousRecord(store: Store, digest: string, now: number): ReturnType<typeof readRecord<'modules'>> {
  try {
    return readRecord(store, 'modules', digest);
  } catch (err) {
    if (!isHelixError(err) || err.code !== 'D-DATA-RECORD-INVALID') throw err;
    appendAudit(store, now, { kind: 'store.module_record_rebuilt', digest, code: err.code, problem: err.message });
    return undefined;
  }
}

/** Records (or refreshes) every loaded module: its bytes as a blob and its metadata, in one transaction. */
export async function recordModules(store: Store, tools: readonly LoadedTool[], now: number): Promise<void> {
  if (tools.length === 0) return;
  // The bytes are kept so a run can be verified after the toolpack has changed or gone.
  const blobs = await Promise.all(tools.map((t) => (store.db.blobs.doesExist(t.manifest.digest.slice(7)) ? undefined : writeChunks(store, once(t.module.bytes)))));
  await store.root.transaction(() => {
    for (const b of blobs) if (b !== undefined) commitBlob(store, b);
    for (const t of tools) {
      const digest = t.manifest.digest;
      const previous = previousRecord(store, digest, now);
      const info = t.module.info;
      store.db.modules.put(digest, {
        digest,
        blob: digest.slice('sha256:'.length),
        size: t.module.bytes.length,
        entrypoint: t.manifest.entrypoint ?? 'execute',
        abi: t.manifest.abi,
        tools: [...new Set([...(previous?.tools ?? []), `${t.manifest.id}@${t.manifest.version}`])].sort(),
        exports: info.exports.map((e) => `${e.kind} ${e.name}`),
        imports: info.imports.map((i) => `${i.kind} ${i.module}.${i.name}`),
        features: info.features,
        instrumented: { sha256: createHash('sha256').update(t.module.instrumented.bytes).digest('hex'), max_memory_pages: t.limits.maxMemoryPages, recyclable: t.module.instrumented.recyclable },
        first_loaded_at: previous?.first_loaded_at ?? now,
        last_loaded_at: now,
      });
    }
  });
}
