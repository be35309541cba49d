// Every conformance check, by category, in the report's order. Each category's checks live in
// a file of their own; coverage.ts holds them to abi/ABI.md.
import type { Check } from '../check.js';
import { artifactChecks } from './artifacts/index.js';
import { capabilityChecks } from './capabilities/index.js';
import { cpuChecks } from './cpu/index.js';
import { decisionChecks } from './decisions/index.js';
import { fileChecks } from './files/index.js';
import { fuzzChecks } from './fuzz/index.js';
import { identityChecks } from './identity/index.js';
import { ioChecks } from './io/index.js';
import { isolationChecks } from './isolation/index.js';
import { mcpChecks } from './mcp/index.js';
import { memoryChecks } from './memory/index.js';
import { moduleChecks } from './module/index.js';
import { privilegedChecks } from './privileged/index.js';
import { secretChecks } from './secrets/index.js';
import { storeChecks } from './store/index.js';

/** All checks. */
export const CHECKS: readonly Check[] = [
  ...moduleChecks,
  ...cpuChecks,
  ...memoryChecks,
  ...ioChecks,
  ...decisionChecks,
  ...capabilityChecks,
  ...privilegedChecks,
  ...artifactChecks,
  ...fileChecks,
  ...secretChecks,
  ...identityChecks,
  ...storeChecks,
  ...isolationChecks,
  ...mcpChecks,
  ...fuzzChecks,
];
