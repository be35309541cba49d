// The real dockerd of scripts/services.sh for the Docker tests: brought up (idempotently) by the
// tests themselves, and the id of its local seqkit image; the containers a run created, from the
// engine's event log; the shape of a guest's raw answer.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { LABEL_RUN } from '../../capabilities/docker-container.js';
import { runCommand } from './fresh-machine.js';

const SCRIPT = path.resolve(import.meta.dirname, '..', '..', 'scripts', 'services.sh');
const STATE = process.env.HELIX_SERVICES_DIR ?? '/var/lib/helix-services';
/** Installing docker.io on a fresh machine takes minutes; the bound only stops a hang. */
export const UP_BOUND_MS = 20 * 60_000;
/** A call that starts a container: well under a second on an idle machine, far slower on a loaded one; the bound only stops a hang. */
export const CALL_BOUND_MS = 120_000;
/** The limits of the Docker tests' guest toolpacks. */
export const GUEST_LIMITS = { maxInputBytes: 100_000, maxOutputBytes: 4_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 100 };
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
  capability_result?: { name: string; result: Record<string, unknown> };
  error?: { code: string; message: string; details: Record<string, unknown> };
}

/** The moment to count a call's containers from: fractional seconds, so a replay of a run made a moment ago does not see that run's create event. */
export function eventsSince(): number {
  return (Date.now() - 50) / 1000;
}

/** How many containers the engine created for `runId` since `since` (from its event log): a refusal made before anything ran created none. */
export async function containersCreated(runId: string, since: number): Promise<number> {
  const until = Math.floor(Date.now() / 1000) + 1;
  const stream = (await new Docker().getEvents({
    since,
    until,
    filters: { type: ['container'], event: ['create'], label: [`${LABEL_RUN}=${runId}`] },
  })) as unknown as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text.split('\n').filter((l) => l.trim() !== '').length;
}
