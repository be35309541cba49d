// The privileged category, in the report's order: Docker (docker.run and container toolpacks),
// Slurm (the slurm.* capabilities and their built-ins) and fan-out (job bundles, `helix job run`,
// collect, job arrays). Every hostile request is refused with its code before anything runs on the
// engine or the cluster, every hostile thing a container or a job leaves behind is refused when it
// is read back, and tampered bundles are refused before anything is written.
import type { Check } from '../../check.js';
import { containerChecks } from './containers.js';
import { dockerRefusalChecks } from './docker-refusals.js';
import { dockerRunChecks } from './docker-runs.js';
import { fanoutBundleChecks } from './fanout-bundles.js';
import { fanoutTamperingChecks } from './fanout-tampering.js';
import { slurmJobChecks } from './slurm-jobs.js';
import { slurmRefusalChecks } from './slurm-refusals.js';

/** The privileged checks. */
export const privilegedChecks: readonly Check[] = [
  ...dockerRefusalChecks,
  ...dockerRunChecks,
  ...containerChecks,
  ...slurmRefusalChecks,
  ...slurmJobChecks,
  ...fanoutBundleChecks,
  ...fanoutTamperingChecks,
];
