// What the memory checks share: a guest that grows its memory until refused and answers the pages
// it reached, one that grows its tables the same way, the pieces of a hand-written module binary,
// and the engine's census of what its workers keep.
import type { EngineStats, Host } from '../../../host/5-host/host.js';
import type { CheckContext, EngineAdapter, PackSpec } from '../../check.js';

/** Pages of 64 KiB in a MiB. */
export const PAGES_PER_MB = 16;

/** Grows memory a page at a time until refused; leaves the page count (i32). */
const GROW_I32 = '(block $b (loop $l (br_if $b (i32.eq (memory.grow (i32.const 1)) (i32.const -1))) (br $l))) (memory.size)';

/** A tool that grows its memory (declared up to 65536 pages) until refused and answers {"value": pages}. */
export function growProbe(engine: EngineAdapter, id: string, manifest: Record<string, unknown>, pages = 1): PackSpec {
  return engine.pack(id, engine.guests.number(GROW_I32, { pages, maxPages: 65536 }), manifest);
}

/**
 * WAT that grows tables 0..count-1 in halving steps from 2^20 until no step fits, then leaves
 * the sum of their sizes (i32); needs i32 locals $d and $sum.
 */
export function growTables(count: number): string {
  const grow = (t: number): string => `
    (local.set $d (i32.const 1048576))
    (block $full${t} (loop $step${t}
      (if (i32.eq (table.grow ${t} (ref.null func) (local.get $d)) (i32.const -1))
        (then (local.set $d (i32.shr_u (local.get $d) (i32.const 1))) (br_if $full${t} (i32.eqz (local.get $d)))))
      (br $step${t})))
    (local.set $sum (i32.add (local.get $sum) (table.size ${t})))`;
  return `${Array.from({ length: count }, (_, t) => grow(t)).join('')} (local.get $sum)`;
}

/** `n` as unsigned LEB128. */
export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/** 100,000 mutable globals: within V8's limit of globals, but one added export each after instrumentation. */
export const MANY_GLOBALS = '(global (mut i32) (i32.const 0))'.repeat(100_000);

/** A module binary's magic and version. */
export const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** A module binary's section of `id` holding `content`. */
export const section = (id: number, content: readonly number[]): number[] => [id, ...leb(content.length), ...content];

/** The engine's census, after a well-behaved call so a worker is idle to answer it. */
export async function census(ctx: CheckContext): Promise<EngineStats> {
  const host = await ctx.host();
  return host.engineStats();
}

/** The keys (digest:cap) of the tools' own variants, which the loader made and keeps. */
export function ownKeys(host: Host): Set<string> {
  return new Set(host.tools().flatMap((t) => (t.kind === 'wasm' ? [`${t.moduleDigest}:${t.limits.maxMemoryPages}`] : [])));
}
