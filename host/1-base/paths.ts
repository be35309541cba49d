// Locates the package root, so the bundled toolpacks and the compiled worker are found the same way
// from TypeScript sources (tests) and from dist/ (the installed CLI).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The directory holding Helix's package.json. */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'helix') {
      cached = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find Helix's package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** The toolpacks bundled with Helix (the package's `plugins/` folder). */
export function bundledToolpacksDir(): string {
  return path.join(packageRoot(), 'plugins');
}

/** @deprecated The former name of bundledToolpacksDir. */
export const bundledPluginsDir = bundledToolpacksDir;
