// The variant cache on its own (ABI-ALLOC-009): its bounds, least recently used first, never a
// variant a call holds, nothing kept of a failed build.
import { describe, expect, it } from 'vitest';
import { MAX_MODULE_VARIANT_BYTES, MAX_MODULE_VARIANTS } from '../../../abi/index.js';
import { VariantCache, type VariantBuild } from './variant-cache.js';

/** A build of `bytes` bytes whose value is its key; evictions are noted in `gone`. */
function builder(gone: string[], bytes = 1) {
  return (key: string) => (): VariantBuild<string> => ({ value: Promise.resolve(key), bytes, evicted: () => gone.push(key) });
}

describe('VariantCache', () => {
  it('defaults to the ABI bounds', () => {
    expect(new VariantCache().limits).toEqual({ maxVariants: MAX_MODULE_VARIANTS, maxBytes: MAX_MODULE_VARIANT_BYTES });
  });

  it('gives up the least recently used variant past the count bound, and tells its holders', async () => {
    const gone: string[] = [];
    const cache = new VariantCache({ maxVariants: 2, maxBytes: 100 });
    const build = builder(gone);
    for (const key of ['a', 'b']) cache.acquire(key, build(key)).release();
    cache.acquire('a', build('a')).release(); // a is now more recent than b
    cache.acquire('c', build('c')).release();
    expect(gone).toEqual(['b']);
    expect(cache.stats()).toMatchObject({ keys: ['a', 'c'], built: 3, evicted: 1, bytes: 2 });
  });

  it('keeps at most maxBytes, and a variant larger than that only while a call holds it', () => {
    const gone: string[] = [];
    const cache = new VariantCache({ maxVariants: 10, maxBytes: 10 });
    cache.acquire('a', builder(gone, 6)('a')).release();
    cache.acquire('b', builder(gone, 6)('b')).release();
    expect(gone).toEqual(['a']);
    const huge = cache.acquire('h', builder(gone, 11)('h'));
    expect(cache.has('h')).toBe(true);
    huge.release();
    expect(gone).toEqual(['a', 'b', 'h']);
    expect(cache.stats()).toMatchObject({ keys: [], bytes: 0 });
  });

  it('never gives up a variant a call holds, and comes back within bounds when the calls end', () => {
    const gone: string[] = [];
    const cache = new VariantCache({ maxVariants: 1, maxBytes: 100 });
    const a = cache.acquire('a', builder(gone)('a'));
    const b = cache.acquire('b', builder(gone)('b'));
    expect(cache.stats().keys).toEqual(['a', 'b']);
    a.release();
    expect(gone).toEqual(['a']);
    b.release();
    b.release(); // a second release is a no-op
    expect(cache.stats().keys).toEqual(['b']);
  });

  it('builds once per key while held, and hands back a compiled variant without a wait', async () => {
    const cache = new VariantCache({ maxVariants: 4, maxBytes: 100 });
    let builds = 0;
    const build = () => {
      builds += 1;
      return { value: Promise.resolve('v'), bytes: 1 };
    };
    const first = cache.acquire('k', build);
    expect(first.ready).toBeUndefined();
    await first.value;
    const second = cache.acquire('k', build);
    expect(second.ready).toBe('v');
    expect(builds).toBe(1);
  });

  it('keeps nothing of a build that throws or fails, so the next call tries again', async () => {
    const cache = new VariantCache({ maxVariants: 4, maxBytes: 100 });
    expect(() =>
      cache.acquire('x', () => {
        throw new RangeError('cannot instrument');
      }),
    ).toThrow('cannot instrument');
    expect(cache.stats()).toMatchObject({ keys: [], bytes: 0, built: 0 });
    const failed = cache.acquire('y', () => ({ value: Promise.reject(new Error('cannot compile')), bytes: 5 }));
    await expect(failed.value).rejects.toThrow('cannot compile');
    failed.release();
    expect(cache.stats()).toMatchObject({ keys: [], bytes: 0, built: 1 });
  });
});
