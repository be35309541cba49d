// The instrumenter's version, part of the key under which the store caches instrumented modules
// (ABI-LOAD-008), so that a host never runs a module instrumented by other rules than its own.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Raise it with every change to host/2-sandbox/wasm/ that changes the bytes the instrumenter writes (fuel
 * costs, metering, memory and table rewrites, added exports) or what the decoder refuses: cached
 * modules of another version are never read, and are instrumented again.
 */
export const INSTRUMENTER_VERSION = 1;

let key: string | undefined;

/**
 * INSTRUMENTER_VERSION with the sha256 of the instrumenter's own code (the files of this folder
 * as this host runs them), so a build that changed host/2-sandbox/wasm/ without raising the version still
 * misses the entries of the other build.
 */
export function instrumenterKey(): string {
  if (key !== undefined) return key;
  const dir = new URL('.', import.meta.url);
  const hash = createHash('sha256');
  const files = readdirSync(dir)
    .filter((f) => /\.(js|ts)$/.test(f) && !/\.(d|test)\.ts$/.test(f))
    .sort();
  for (const f of files) hash.update(f).update(readFileSync(new URL(f, dir)));
  key = `v${INSTRUMENTER_VERSION}-${hash.digest('hex').slice(0, 16)}`;
  return key;
}
