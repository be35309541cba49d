// The io category, in the report's order: input and output across the ABI. Oversize input and
// output, pointers and lengths outside the guest's memory, output that is not UTF-8, not JSON, not
// an envelope or not within the JSON bounds, requests a client should never slip past the host,
// and extism/v1's ways of answering. Each ends in one envelope with its exact code; the host serves on.
import type { Check } from '../../check.js';
import { callProtocolChecks } from './call-protocol.js';
import { extismKernelChecks } from './extism-kernel.js';
import { extismRunChecks } from './extism-runs.js';
import { jsonBoundChecks } from './json-bounds.js';
import { outputChecks } from './outputs.js';
import { requestChecks } from './requests.js';
import { sizeChecks } from './sizes.js';
import { trapChecks } from './traps.js';

/** The io checks. */
export const ioChecks: readonly Check[] = [
  ...sizeChecks,
  ...callProtocolChecks,
  ...trapChecks,
  ...outputChecks,
  ...jsonBoundChecks,
  ...requestChecks,
  ...extismKernelChecks,
  ...extismRunChecks,
];
