// Compiled-module metadata by digest (README "Runs, artifacts and provenance"): what each module
// loaded into this store was (size, exports, imports, proposals used, its instrumented form), so an
// operator can tell which exact build a run's module_digest names, long after the file is gone.
import { isHelixError } from '../../abi/index.js';
import { canonicalJson } from '../1-base/hashing.js';
import { appendAudit } from './audit.js';
import { commitBlob, writeChunks } from './blobs.js';
import { storeHandle, type Store } from './handle.js';
import { readRecord } from './records.js';

/**
 * What the store records of a loaded module: the part of the loader's LoadedTool it reads,
 * written out here so the store does not import the loader above it.
 */
export interface ModuleToRecord {
  readonly manifest: {
    readonly digest: string;
    readonly entrypoint?: string;
    readonly abi: string;
    readonly id: string;
    readonly version: string;
  };
  readonly module: {
    readonly bytes: Uint8Array;
    readonly info: {
      readonly exports: ReadonlyArray<{ readonly kind: string; readonly name: string }>;
      readonly imports: ReadonlyArray<{ readonly kind: string; readonly module: string; readonly name: string }>;
      readonly features: readonly string[];
    };
    /** The instrumented module's sha256 (hex) and whether its instances can be recycled. */
    readonly instrumented: { readonly sha256: string; readonly recyclable: boolean };
  };
  readonly limits: { readonly maxMemoryPages: number };
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** The metadata of the module with this digest, checked; undefined when it was never loaded here. */
export function readModuleRecord(store: Store, digest: string): ReturnType<typeof readRecord<'modules'>> {
  return readRecord(store, 'modules', digest);
}

/**
 * Keeps a module record brought from another store (a fan-out node's, abi/ABI.md "Fan-out") unless
 * this store has one for its digest; call inside the transaction that commits the module's blob.
 */
export function keepModuleRecord(store: Store, record: NonNullable<ReturnType<typeof readRecord<'modules'>>>): void {
  const { modules } = storeHandle(store).db;
  if (!modules.doesExist(record.digest)) modules.put(record.digest, record);
}

/**
 * The module's record as stored, or undefined. A damaged one is rebuilt from the module at hand
 * rather than stopping every host start; the audit trail keeps what was wrong with it.
 */
function previousRecord(store: Store, digest: string, now: number): ReturnType<typeof readRecord<'modules'>> {
  try {
    return readModuleRecord(store, digest);
  } catch (err) {
    if (!isHelixError(err) || err.code !== 'D-DATA-RECORD-INVALID') throw err;
    appendAudit(store, now, { kind: 'store.module_record_rebuilt', digest, code: err.code, problem: err.message });
    return undefined;
  }
}

/** How stale a module record's last_loaded_at may grow before a host start rewrites it. */
const REFRESH_MS = 60 * 60 * 1000;

/**
 * Records (or refreshes) every loaded module: its bytes as a blob and its metadata, in one
 * transaction. A start that would change nothing but last_loaded_at, by less than REFRESH_MS,
 * writes nothing: no commit (a flush of the file) on every `helix call` from the shell.
 */
export async function recordModules(store: Store, tools: readonly ModuleToRecord[], now: number): Promise<void> {
  if (tools.length === 0) return;
  // The bytes are kept so a run can be verified after the toolpack has changed or gone.
  const blobs = await Promise.all(
    tools.map((t) =>
      storeHandle(store).db.blobs.doesExist(t.manifest.digest.slice(7)) ? undefined : writeChunks(store, once(t.module.bytes)),
    ),
  );
  // Once per digest: tools sharing a module share its record, and a damaged one is audited once.
  const previous = new Map<string, ReturnType<typeof readRecord<'modules'>>>();
  for (const t of tools)
    if (!previous.has(t.manifest.digest)) previous.set(t.manifest.digest, previousRecord(store, t.manifest.digest, now));
  const records = tools.map((t) => moduleRecord(t, previous.get(t.manifest.digest), now));
  if (blobs.every((b) => b === undefined) && records.every((r) => r.current)) return;
  await store.transaction(() => {
    for (const b of blobs) if (b !== undefined) commitBlob(store, b);
    for (const t of tools) {
      // Read again inside the transaction: another process may have written it since.
      let stored: ReturnType<typeof readRecord<'modules'>>;
      try {
        stored = readModuleRecord(store, t.manifest.digest);
      } catch {
        stored = undefined; // damaged: audited above, rewritten now
      }
      const record = moduleRecord(t, stored, now);
      if (!record.current) storeHandle(store).db.modules.put(t.manifest.digest, record.value);
    }
  });
}

/** The record `t` should have, and whether the stored one is current (the same but for a recent last_loaded_at). */
function moduleRecord(
  t: ModuleToRecord,
  previous: ReturnType<typeof readRecord<'modules'>>,
  now: number,
): { value: NonNullable<ReturnType<typeof readRecord<'modules'>>>; current: boolean } {
  const digest = t.manifest.digest;
  const info = t.module.info;
  const value = {
    digest,
    blob: digest.slice('sha256:'.length),
    size: t.module.bytes.length,
    entrypoint: t.manifest.entrypoint ?? 'execute',
    abi: t.manifest.abi,
    tools: [...new Set([...(previous?.tools ?? []), `${t.manifest.id}@${t.manifest.version}`])].sort(),
    exports: info.exports.map((e) => `${e.kind} ${e.name}`),
    imports: info.imports.map((i) => `${i.kind} ${i.module}.${i.name}`),
    features: info.features,
    instrumented: {
      sha256: t.module.instrumented.sha256,
      max_memory_pages: t.limits.maxMemoryPages,
      recyclable: t.module.instrumented.recyclable,
    },
    first_loaded_at: previous?.first_loaded_at ?? now,
    last_loaded_at: now,
  };
  const current =
    previous !== undefined &&
    now - previous.last_loaded_at < REFRESH_MS &&
    canonicalJson({ ...previous, last_loaded_at: 0 }) === canonicalJson({ ...value, last_loaded_at: 0 });
  return { value, current };
}
