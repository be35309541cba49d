// Slurm's job states mapped to Helix's (ABI-SLURM-008): the few a tool needs to decide what to
// do next, each with whether it is final and whether the job's work is there to collect.

/** A job's state as Helix reports it. */
export type JobStateName =
  | 'pending'
  | 'running'
  | 'suspended'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'timeout'
  | 'out_of_memory'
  | 'node_fail'
  | 'preempted'
  | 'unknown';

/** Every Helix job state, in the order a combined state prefers them (see combineStates). */
export const JOB_STATE_NAMES: readonly JobStateName[] = [
  'running',
  'pending',
  'suspended',
  'unknown',
  'node_fail',
  'out_of_memory',
  'timeout',
  'failed',
  'preempted',
  'cancelled',
  'completed',
];

/** A mapped state. */
export interface JobState {
  readonly name: JobStateName;
  /** The job will not change any more (Slurm may still requeue a preempted or failed node's job). */
  readonly terminal: boolean;
}

// Slurm's base states (squeue's %T, sacct's State) by what they mean for Helix.
const STATES: Readonly<Record<string, JobStateName>> = {
  PENDING: 'pending',
  REQUEUED: 'pending',
  REQUEUE_HOLD: 'pending',
  REQUEUE_FED: 'pending',
  RESV_DEL_HOLD: 'pending',
  SPECIAL_EXIT: 'pending',
  CONFIGURING: 'running',
  RUNNING: 'running',
  COMPLETING: 'running',
  RESIZING: 'running',
  SIGNALING: 'running',
  STAGE_OUT: 'running',
  UPDATE_DB: 'running',
  POWER_UP_NODE: 'running',
  SUSPENDED: 'suspended',
  STOPPED: 'suspended',
  COMPLETED: 'completed',
  FAILED: 'failed',
  BOOT_FAIL: 'node_fail',
  NODE_FAIL: 'node_fail',
  CANCELLED: 'cancelled',
  REVOKED: 'cancelled',
  DEADLINE: 'timeout',
  TIMEOUT: 'timeout',
  OUT_OF_MEMORY: 'out_of_memory',
  PREEMPTED: 'preempted',
};

const TERMINAL: ReadonlySet<JobStateName> = new Set([
  'completed',
  'failed',
  'cancelled',
  'timeout',
  'out_of_memory',
  'node_fail',
  'preempted',
]);

/**
 * Maps one Slurm state to Helix's. sacct writes `CANCELLED by 0`, squeue `CANCELLED`; a state
 * Slurm adds later is `unknown`, not final, so a caller polls on rather than collects too soon.
 */
export function mapSlurmState(slurmState: string): JobState {
  const base = slurmState.trim().split(/[\s+]/)[0]!.toUpperCase();
  const name = STATES[base] ?? 'unknown';
  return { name, terminal: TERMINAL.has(name) };
}

/**
 * The state of a job from its tasks' states: running while any task runs, waiting while any
 * waits, and once all are final the worst final state (completed only when every task completed).
 */
export function combineStates(states: readonly JobState[]): JobState {
  if (states.length === 0) return { name: 'unknown', terminal: false };
  const names = new Set(states.map((s) => s.name));
  const name = JOB_STATE_NAMES.find((n) => names.has(n))!;
  return { name, terminal: TERMINAL.has(name) };
}
