// `helix job collect --verify` (ABI-FANOUT-005): before a result bundle enters the submitting
// store, its run is collected into a scratch store of its own (the job's input artifacts, then the
// result, as collect writes them) and re-executed there by `helix verify`; a run that does not
// reproduce is refused with the report, and the scratch store is removed either way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HelixError } from '../../../abi/index.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { getRun } from '../runs/run-store.js';
import { verifyRun, type VerifyReport } from '../runs/verify.js';
import { importInputs } from './bundle-blobs.js';
import { readJob } from './bundle-format.js';
import { collectResult, type Collected } from './collect-result.js';

/**
 * Verifies the run of the result bundle in `bundleDir` on a scratch store; throws
 * D-DATA-BUNDLE-VERIFY when it does not reproduce. Returns the report, or undefined when there is
 * nothing to re-execute (no run, a failed one, or a container toolpack's, ABI-DOCKER-009).
 */
async function verifyResult(bundleDir: string): Promise<VerifyReport | undefined> {
  const dir = path.resolve(bundleDir);
  const job = readJob(dir);
  const home = mkdtempSync(path.join(tmpdir(), 'helix-verify-'));
  const store = openStore(home);
  try {
    await importInputs(store, dir, job.inputs);
    const collected = await collectResult(store, dir);
    // A failed run has no result to reproduce, and a container toolpack's run no module to run again.
    // (The module digest is the job's own, checked against its params by the collect.)
    if (collected.status !== 'succeeded' || getRun(store, job.run_id)?.module_digest == null) return undefined;
    const report = await verifyRun(store, job.run_id);
    if (!report.match) {
      throw new HelixError('D-DATA-BUNDLE-VERIFY', {
        message: `Run ${job.run_id} of ${dir} does not reproduce: ${report.checks
          .filter((c) => !c.ok)
          .map((c) => c.check)
          .join(', ')}.`,
        details: { bundle: dir, report: JSON.parse(JSON.stringify(report)) as Record<string, unknown> },
      });
    }
    return report;
  } finally {
    await store.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** Collects the job bundle in `bundleDir` into `store`, verifying its run first when `verify` is set. */
export async function collectBundle(store: Store, bundleDir: string, verify: boolean): Promise<Collected> {
  if (verify) await verifyResult(bundleDir);
  return collectResult(store, bundleDir);
}
