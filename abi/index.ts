// The ABI contract of Helix: constants, error taxonomy, and the zod schemas of every format.
export * from './constants.js';
export * from './errors.js';
export * from './extism.js';
export * from './helix-error.js';
export * from './json-bounds.js';
export * from './limits.js';
export * from './manifest.js';
export * from './envelopes.js';
export * from './policy.js';
export * from './policy-slurm.js';
export * from './records.js';
export * from './container-manifest.js';
export * from './violation-lines.js';
export { fromPointer } from './json-pointer.js';
