// The canary: a well-behaved tool every check's host also loads. After each hostile check the
// runner calls it on the same host with a new input, so it runs rather than replays, and the
// check fails unless it answers with its input: the host survived. Each engine's adapter builds its
// canary (EngineAdapter.canary): on the extism engine an extism/v1 plugin, so the Extism lanes are
// proven alive too.
import { extismEcho } from './extism-wat.js';

export const CANARY_ID = 'conformance.canary';

/** An extism/v1 plugin whose output is its input, byte for byte. */
export const EXTISM_ECHO = extismEcho();
