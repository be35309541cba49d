// What an outside reviewer checks the host's answers against, beyond the Host's own operations:
// the bytes the broker answers a refused capability call with (ABI-CAP-002), how a run's journal
// chains (ABI-CAP-007), the load cache's key for a module (ABI-LOAD-008), and the Extism runtime
// itself, to run a plugin as plain @extism/extism would (ABI-EXTISM-011). The conformance suite
// reaches the call pipeline and the engine for these only here.
export { errorAnswer, FORBIDDEN, FORBIDDEN_BYTES } from '../4-calls/broker/answers.js';
export { brokenLink, entryHash, JOURNAL_GENESIS } from '../3-store/journal.js';
export { moduleCacheKey } from '../4-calls/loader/loader-cache.js';
export { loadExtism } from '../2-sandbox/engine/extism.js';
