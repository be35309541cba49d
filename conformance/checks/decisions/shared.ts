// What the decisions checks share: the engines they run on and the allowlist of the catching guests.

/** Both WebAssembly engines. */
export const BOTH = ['helix', 'extism'] as const;

/** The capabilities of the catching guests: the clock, allowlisted, cheap, journaled when served. */
export const CLOCK = { abiVersion: 1, allow: ['clock.now_unix'] };
