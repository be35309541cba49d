// The real dockerd of scripts/services.sh for the Docker tests: brought up (idempotently) by the
// tests themselves, and the id of its local seqkit image; the shape of a guest's raw answer.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCommand } from './fresh-machine.js';

const SCRIPT = path.resolve(import.meta.dirname, '..', '..', 'scripts', 'services.sh');
const STATE = process.env.HELIX_SERVICES_DIR ?? '/var/lib/helix-services';
/** Installing docker.io on a fresh machine takes minutes; the bound only stops a hang. */
export const UP_BOUND_MS = 20 * 60_000;
/** The name of the image scripts/services.sh builds. */
export const SEQKIT_IMAGE_NAME = 'helix-seqkit:local';

/** Brings dockerd up with scripts/services.sh and returns the id of the local seqkit image. */
export async function upDocker(): Promise<string> {
  const up = await runCommand('bash', [SCRIPT, 'up', 'docker'], { cwd: tmpdir(), env: process.env, killAfterMs: UP_BOUND_MS });
  if (up.code !== 0) throw new Error(`scripts/services.sh up docker exited ${up.code}:\n${up.stdout}\n${up.stderr}`);
  const images = JSON.parse(await readFile(path.join(STATE, 'images.json'), 'utf8')) as { images: { name: string; id: string }[] };
  const image = images.images.find((i) => i.name === SEQKIT_IMAGE_NAME);
  if (image === undefined) throw new Error(`scripts/services.sh did not record ${SEQKIT_IMAGE_NAME} in ${STATE}/images.json`);
  return image.id;
}

/** A capability answer as the test guest script.ts hands it back. */
export interface Answer {
  status: 'ok' | 'error';
  capability_result?: { name: string; result: any };
  error?: { code: string; message: string; details: any };
}
