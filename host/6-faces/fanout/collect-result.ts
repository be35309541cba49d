// Transitional: the conformance suite's fan-out checks call this until they use host.jobs.collect.
import type { Store } from '../../3-store/open-store.js';
import { collectResult as collectInto, type Collected } from '../../4-calls/jobs/collect-result.js';

/** Collects the result of the job bundle in `bundleDir` into `store`; host.jobs.collect does the same. */
export function collectResult(store: Store, bundleDir: string): Promise<Collected> {
  return collectInto(store, bundleDir);
}
