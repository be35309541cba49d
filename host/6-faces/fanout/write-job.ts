// Transitional: the conformance suite's fan-out checks call this until they use host.jobs.bundle.
import type { Host } from '../../5-host/host.js';
import type { Job, JobCall } from '../../5-host/host-jobs.js';

/** Writes the job bundle of `call` into `dir` from `host`'s store; host.jobs.bundle does the same. */
export function writeJobBundle(host: Host, call: JobCall, dir: string): Promise<Job> {
  return host.jobs.bundle(call, dir);
}
