// The module category: module shape and imports, in the report's order. A module that breaks the
// ABI's shape is refused when the host loads it, the violation named, before any call is served.
import type { Check } from '../../check.js';
import { exportChecks } from './exports.js';
import { extismPluginChecks } from './extism-plugins.js';
import { importChecks } from './imports.js';
import { loadCacheChecks } from './load-cache.js';
import { manifestChecks } from './manifests.js';
import { moduleByteChecks } from './module-bytes.js';

/** The module checks. */
export const moduleChecks: readonly Check[] = [
  ...importChecks,
  ...exportChecks,
  ...moduleByteChecks,
  ...extismPluginChecks,
  ...manifestChecks,
  ...loadCacheChecks,
];
