// The real engines the Docker and Slurm tests run against, brought up by the project's own script
// (scripts/services.sh, idempotent), so a test on a fresh machine installs and starts them itself.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCommand } from './fresh-machine.js';

/** The script, and the folder its state lives in. */
export const SERVICES_SCRIPT = path.resolve(import.meta.dirname, '..', '..', 'scripts', 'services.sh');
export const SERVICES_STATE = process.env.HELIX_SERVICES_DIR ?? '/var/lib/helix-services';
/** Installing docker.io or slurm-wlm on a fresh machine takes minutes; the bound only stops a hang. */
export const SERVICES_UP_BOUND_MS = 20 * 60_000;
/** The name of the local image the script builds (docker import; nothing is pulled). */
export const LOCAL_IMAGE = 'helix-seqkit:local';

/** Runs `scripts/services.sh up [which]`; throws with its output when it fails. */
export async function servicesUp(which?: 'docker' | 'slurm'): Promise<void> {
  const up = await runCommand('bash', [SERVICES_SCRIPT, 'up', ...(which === undefined ? [] : [which])], { cwd: tmpdir(), env: process.env, killAfterMs: SERVICES_UP_BOUND_MS });
  if (up.code !== 0) throw new Error(`scripts/services.sh up ${which ?? ''} exited ${up.code}:\n${up.stdout}\n${up.stderr}`);
}

/** The id (`sha256:...`) of the local image, as the script recorded it in images.json. */
export async function localImageId(): Promise<string> {
  const images = JSON.parse(await readFile(path.join(SERVICES_STATE, 'images.json'), 'utf8')) as { images: { name: string; id: string }[] };
  const found = images.images.find((i) => i.name === LOCAL_IMAGE);
  if (found === undefined) throw new Error(`${LOCAL_IMAGE} is not in ${SERVICES_STATE}/images.json: run scripts/services.sh up docker`);
  return found.id;
}
