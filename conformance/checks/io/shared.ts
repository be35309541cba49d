// What the io checks share: the engines most of them run on, an output schema taking any object,
// a helix/v1 guest answering a number, and a test for text cut in the middle of an emoji.
import { numberResultModule } from '../../kit/guest-wat.js';

/** Both WebAssembly engines. */
export const BOTH = ['helix', 'extism'] as const;

/** An output schema taking any object. */
export const OPEN = { type: 'object' };

/** True when a value's JSON holds a lone surrogate (JSON.stringify escapes only those). */
export const hasLoneSurrogate = (v: unknown): boolean => /\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(v) ?? '');

/** A helix/v1 module whose execute runs `body` (leaving an i64) and answers {"value": it}; `extra` fields, `locals` first. */
export const numberModule = (body: string, extra = '', locals = ''): string => numberResultModule(body, { extra, locals });
