// The loader's face of the store's load cache (ABI-LOAD-008): modules instrumented for a memory
// cap by this instrumenter and accepted by this engine, and schemas that passed this checker, so
// that a start decodes, instruments and checks only what it has not seen before.
import { readLoadCache, writeLoadCache } from '../../3-store/load-cache.js';
import type { Store } from '../../3-store/open-store.js';
import type { ModuleCache } from '../../2-sandbox/modules/module-pipeline.js';
import { instrumenterKey, type ModuleInfo } from '../../2-sandbox/wasm/index.js';

/** Raise it when the facts kept of a module change shape; old entries are then not read. */
const FACTS_VERSION = 1;

/** What the loader reads from and queues for the load cache: modules (the pipeline's ModuleCache) and schemas. */
export interface LoaderCache extends ModuleCache {
  /** Whether the schema under `key` (schemaCacheKey) passed the check. */
  schemaChecked(key: string): boolean;
  /** Queues a schema that passed the check. */
  putSchema(key: string): void;
  /** Writes what was queued, in one transaction. */
  flush(): Promise<void>;
}

interface ModuleFacts {
  readonly info: ModuleInfo;
  readonly recyclable: boolean;
  readonly globalExports: string[];
  readonly hasStart: boolean;
}

function isModuleFacts(f: unknown): f is ModuleFacts {
  if (typeof f !== 'object' || f === null) return false;
  const m = f as Partial<ModuleFacts>;
  const info = m.info as Partial<ModuleInfo> | undefined;
  return (
    typeof m.recyclable === 'boolean' &&
    typeof m.hasStart === 'boolean' &&
    Array.isArray(m.globalExports) &&
    typeof info === 'object' &&
    info !== null &&
    Array.isArray(info.imports) &&
    Array.isArray(info.exports) &&
    Array.isArray(info.memories) &&
    Array.isArray(info.tables) &&
    Array.isArray(info.features)
  );
}

/**
 * The key of a module's entry: everything its instrumented form and the engine's verdict depend
 * on (the module, the cap, the instrumenter, the engine's V8).
 */
export function moduleCacheKey(digest: string, cap: number, instrumenter: string = instrumenterKey()): string {
  return `module:${digest}:${cap}:${instrumenter}:f${FACTS_VERSION}:v8-${process.versions.v8}`;
}

/** The load cache of `store`; `now` stamps the audit records of rebuilt entries. */
export function storeLoaderCache(store: Store, now: () => number): LoaderCache {
  const queued = new Map<string, { key: string; facts: unknown; bytes?: Uint8Array; problem?: string }>();
  // Schemas found checked need no write back.
  const known = new Set<string>();
  return {
    module(digest, cap) {
      const entry = readLoadCache(store, moduleCacheKey(digest, cap));
      if (entry?.bytes === undefined || entry.bytesDigest === undefined || !isModuleFacts(entry.facts)) return undefined;
      return { ...entry.facts, bytes: entry.bytes, bytesDigest: entry.bytesDigest };
    },
    putModule(digest, cap, instrumented, problem) {
      const key = moduleCacheKey(digest, cap);
      const facts: ModuleFacts = {
        info: instrumented.info,
        recyclable: instrumented.recyclable,
        globalExports: instrumented.globalExports,
        hasStart: instrumented.hasStart,
      };
      queued.set(key, { key, facts, bytes: instrumented.bytes, ...(problem === undefined ? {} : { problem }) });
    },
    schemaChecked(key) {
      const checked = readLoadCache(store, key)?.facts === true;
      if (checked) known.add(key);
      return checked;
    },
    putSchema(key) {
      if (!known.has(key)) queued.set(key, { key, facts: true });
    },
    async flush() {
      const entries = [...queued.values()];
      queued.clear();
      await writeLoadCache(store, entries, now());
    },
  };
}
