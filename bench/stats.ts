// Small statistics for benchmarks: percentiles of latency samples and a timed throughput run.
import { performance } from 'node:perf_hooks';

/** The q-quantile (0..1) of samples, by nearest rank. */
export function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

/** Latency in microseconds of `n` sequential calls, after `warmup` unmeasured ones. */
export async function latency(fn: () => Promise<unknown> | unknown, n: number, warmup: number): Promise<{ median: number; p99: number }> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push((performance.now() - t) * 1000);
  }
  return { median: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
}

/** Calls per second with `concurrency` callers each making calls until `total` are done. */
export async function throughput(fns: ReadonlyArray<() => Promise<unknown>>, total: number): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    fns.map(async (fn) => {
      while (next < total) {
        next += 1;
        await fn();
      }
    }),
  );
  return total / ((performance.now() - t) / 1000);
}

/** Median wall time in ms of `runs` runs of a synchronous function. */
export function medianMs(fn: () => unknown, runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return quantile(samples, 0.5);
}

/** The median of samples (NaN when there are none). */
export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}
