// The outside engines some checks need (Docker, Slurm): found once per run, from the same
// environment Helix itself reads (DOCKER_HOST; SLURM_CONF and the Slurm commands on PATH). A
// check whose service does not answer fails with what is missing and how to start it; it is
// never skipped.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import type { Service } from './check.js';

/** The image the container checks run (scripts/services.sh builds it from Debian's seqkit). */
export const DEFAULT_IMAGE = 'helix-seqkit:local';

/** What a service probe found. */
export interface ServiceState {
  readonly ok: boolean;
  /** Why not, with what to do. */
  readonly problem?: string;
  /** Docker: the id of the checks' image. */
  readonly imageId?: string;
}

const BOUND_MS = 15_000;
const probes = new Map<Service, Promise<ServiceState>>();

/** Probes `service` once per process. */
export function serviceState(service: Service): Promise<ServiceState> {
  let p = probes.get(service);
  if (p === undefined) {
    p = service === 'docker' ? probeDocker() : probeSlurm();
    probes.set(service, p);
  }
  return p;
}

async function probeDocker(): Promise<ServiceState> {
  const where = process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
  const image = process.env.HELIX_CONFORMANCE_IMAGE ?? DEFAULT_IMAGE;
  try {
    const docker = new Docker();
    await withBound(docker.ping(), `Docker at ${where} did not answer a ping`);
    const info = await withBound(docker.getImage(image).inspect(), `Docker at ${where} did not describe image ${image}`);
    return { ok: true, imageId: info.Id };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      problem:
        `Docker is needed and not usable (${where}, image ${image}): ${reason}. ` +
        'Start a Docker engine and build the image (in a clone of Helix: scripts/services.sh up docker), set DOCKER_HOST and HELIX_CONFORMANCE_IMAGE to use others, or leave out --engine container.',
    };
  }
}

async function probeSlurm(): Promise<ServiceState> {
  try {
    await promisify(execFile)('sinfo', ['--noheader', '--format=%P %a'], { timeout: BOUND_MS });
    return { ok: true };
  } catch (e) {
    const reason = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return {
      ok: false,
      problem:
        `A Slurm cluster is needed and sinfo failed (SLURM_CONF=${process.env.SLURM_CONF ?? 'unset'}): ${reason}. ` +
        'Start one (in a clone of Helix: scripts/services.sh up slurm, then eval "$(scripts/services.sh env slurm)"), or leave out --engine container.',
    };
  }
}

function withBound<T>(p: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${BOUND_MS} ms`)), BOUND_MS);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
