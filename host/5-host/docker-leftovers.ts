// The sweep of what a crashed Helix left on the Docker engine and in the work root (ABI-DOCKER-007):
// run at a host's start, in the background, only when the policy grants docker.run to some tool.
// A host that grants no container never loads dockerode nor asks the engine anything, and an
// engine that does not answer costs a line on stderr, never the start.
import type { Policy } from '../../abi/index.js';
import { helixHostName, pidAlive, sweepLeftovers } from '../../capabilities/docker-container.js';
import { defaultWorkRoot, sweepWorkspaces } from '../../capabilities/docker-workspace.js';

/** What a sweep removed, or why it could not. */
export interface DockerSweep {
  readonly containers: readonly string[];
  readonly workspaces: readonly string[];
  readonly error?: string;
}

// The engine answers a list in milliseconds; the bound only keeps a hung engine from holding close().
const SWEEP_BOUND_MS = 30_000;

/** Whether the policy grants docker.run to some tool (by exact name: a wildcard never does). */
export function grantsDocker(policy: Policy): boolean {
  return Object.values(policy.grants).some((caps) => caps.includes('docker.run'));
}

/** Starts the sweep when `policy` grants docker.run; undefined otherwise. Never rejects: a failure is logged and reported. */
export function sweepDockerLeftovers(
  policy: Policy,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<DockerSweep> | undefined {
  if (!grantsDocker(policy)) return undefined;
  return (async (): Promise<DockerSweep> => {
    let workspaces: string[] = [];
    try {
      workspaces = await sweepWorkspaces(defaultWorkRoot(), pidAlive);
      const Docker = (await import('dockerode')).default;
      const containers = await bounded(sweepLeftovers(new Docker(), helixHostName()), SWEEP_BOUND_MS);
      if (containers.length > 0)
        log(`helix: removed ${containers.length} container${containers.length === 1 ? '' : 's'} a stopped Helix process left behind`);
      return { containers, workspaces };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      log(`helix: could not sweep leftover containers on the Docker engine: ${error}`);
      return { containers: [], workspaces, error };
    }
  })();
}

async function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`the engine did not answer within ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
