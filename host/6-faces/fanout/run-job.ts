// `helix job run BUNDLE` on a node (ABI-FANOUT-003, -004): opens a host on a node-local store,
// imports the job's input artifacts with their records (each checked against its sha256), makes
// the call once it has the identity the job was made for, and writes the result bundle into
// BUNDLE/result. A job refused on the node still gets a result bundle, holding the refusal.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { isHelixError, type ResponseEnvelope } from '../../../abi/index.js';
import { errorResponse, ZERO_METRICS } from '../../1-base/response.js';
import { createHost, type Host } from '../../5-host/host.js';
import { readJob, readJobPolicy, writeRefusedResult } from '../../5-host/host-jobs.js';
import { nodeHome } from './node-home.js';

/** Options of runJobBundle. */
export interface RunJobOptions {
  /** The node-local Helix home; default a new directory under $TMPDIR, removed afterwards. */
  readonly home?: string;
}

/**
 * Runs the job bundle in `bundleDir` and writes BUNDLE/result; returns the node's response. A
 * refusal before the call (a bad bundle file, the node's home, another identity) is written as
 * the result's response, with no run, and thrown.
 */
export async function runJobBundle(bundleDir: string, options: RunJobOptions = {}): Promise<ResponseEnvelope> {
  const dir = path.resolve(bundleDir);
  const job = readJob(dir);
  let home: { home: string; temporary: boolean } | undefined;
  let host: Host | undefined;
  try {
    const policy = readJobPolicy(dir, job);
    home = nodeHome(options.home, job.submitted_from);
    host = await createHost({ policy, toolpacksDir: job.plugins_dir, home: home.home });
    await host.jobs.importInputs(dir, job.inputs);
    const response = await host.jobs.call(job);
    await host.jobs.writeResult(dir, job.run_id, response);
    return response;
  } catch (err) {
    if (!isHelixError(err)) throw err;
    const refused = errorResponse('', err.toWire(), ZERO_METRICS, {
      tool_id: job.request.tool_id,
      tool_version: job.request.tool_version,
      digest: null,
    });
    await (host === undefined ? writeRefusedResult(dir, job.run_id, refused) : host.jobs.writeResult(dir, job.run_id, refused));
    throw err;
  } finally {
    await host?.close();
    if (home?.temporary === true) rmSync(home.home, { recursive: true, force: true });
  }
}
