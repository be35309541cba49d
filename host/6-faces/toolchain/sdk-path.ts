// Lets a toolpack written outside the Helix repository build without its own node_modules: the
// AssemblyScript SDK (`@helix/sdk-as`) that Helix ships with is offered to asc as a last-resort
// package folder, and an asconfig.json that extends the SDK's config is pointed at that copy.
// A copy the pack installed itself (its node_modules, or one above it) always wins.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packageRoot } from '../../1-base/paths.js';

/** The npm name of the AssemblyScript guest SDK. */
export const SDK_PACKAGE = '@helix/sdk-as';

/**
 * The node_modules folder that holds the SDK Helix ships with, found from Helix's package root
 * upward as Node would (the workspace link in the repository, or a sibling when Helix is
 * installed as a dependency); undefined when there is none.
 */
export function bundledSdkModulesDir(): string | undefined {
  let dir = packageRoot();
  for (;;) {
    const modules = path.join(dir, 'node_modules');
    if (existsSync(path.join(modules, SDK_PACKAGE, 'package.json'))) return modules;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The text of an asconfig.json whose `extends` names a file of the SDK that cannot be resolved
 * from the config's own folder, with `extends` made absolute into `modulesDir`; any other text
 * is returned as it is (asc reports what is wrong with it).
 */
export function withSdkExtends(text: string, configDir: string, modulesDir: string): string {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return text;
  const base = (config as { extends?: unknown }).extends;
  if (typeof base !== 'string' || !base.startsWith(`${SDK_PACKAGE}/`)) return text;
  try {
    // asc resolves `extends` this way itself; when it works, the pack's own copy is used.
    createRequire(path.join(configDir, 'asconfig.json')).resolve(base);
    return text;
  } catch {
    return JSON.stringify({ ...config, extends: path.join(modulesDir, base) });
  }
}

/** asc's file reader (null for a missing file), rewriting `extends` in `configFile` as withSdkExtends does. */
export function sdkAwareReadFile(configFile: string, modulesDir: string | undefined): (file: string, baseDir: string) => string | null {
  return (file, baseDir) => {
    const full = path.resolve(baseDir, file);
    let text: string;
    try {
      text = readFileSync(full, 'utf8');
    } catch {
      return null;
    }
    return modulesDir !== undefined && full === configFile ? withSdkExtends(text, path.dirname(full), modulesDir) : text;
  };
}

/**
 * Which guest SDK a build of the pack in `packDir` used, for its source stamp (informational,
 * never compared): the version of the @helix/sdk-as the pack resolves (its own copy, else the one
 * Helix ships), or for C (no asconfig) that of helix.h, which is Helix's own version.
 */
export function sdkName(packDir: string, assemblyScript: boolean): string {
  const version = (file: string): string => {
    try {
      return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? 'unknown');
    } catch {
      return 'unknown';
    }
  };
  if (!assemblyScript) return `helix.h ${version(path.join(packageRoot(), 'package.json'))}`;
  let manifest: string | undefined;
  try {
    manifest = createRequire(path.join(packDir, 'asconfig.json')).resolve(`${SDK_PACKAGE}/package.json`);
  } catch {
    const modules = bundledSdkModulesDir();
    manifest = modules === undefined ? undefined : path.join(modules, SDK_PACKAGE, 'package.json');
  }
  return `${SDK_PACKAGE} ${manifest === undefined ? 'unknown' : version(manifest)}`;
}
