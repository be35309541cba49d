// `helix job bundle | submit | run | collect | cancel`: fan-out of tool calls to a node or a Slurm job array
// (abi/ABI.md, "Fan-out"). bundle and submit write job bundles from the store (submit also hands
// them to sbatch as one array); run executes one bundle on a node-local store; collect brings the
// results back into the store. The store is reached through the Host's jobs (host.jobs) or, for
// collect, a store home opened for it (openJobs). Every command prints JSON on stdout.
import type { Command } from 'commander';
import { HelixError, scanJsonText } from '../abi/index.js';
import type { ArrayResources } from '../host/6-faces/fanout/array-slurm.js';
import type { Host } from '../host/5-host/host.js';
import type { JobCall } from '../host/5-host/host-jobs.js';
import { callOptions, hostOptions, positiveInt } from './options.js';
import { EXIT, exitCodeFor, printError, printJson } from './output.js';
import { checkVersionRange, type OfferedTools, openHost, toolOffered } from './open-host.js';
import { checkNewDirectory, exitCodeOf } from './with-store.js';

/** Options of the commands that make job bundles. */
interface MakeOptions {
  readonly input: string;
  readonly dir: string;
  readonly versionRange: string;
  readonly timeoutMs?: number;
  readonly memoryMb?: number;
  /** --toolpacks (or its former name --plugins). */
  readonly toolpacks?: string;
  readonly policy?: string;
  readonly home?: string;
}

/** Runs `body`, printing a HelixError with its exit code. */
async function reporting(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    printError(err);
    process.exitCode = err instanceof HelixError ? exitCodeOf(err) : EXIT.failed;
  }
}

/** The --input JSON object, bounded as `helix call` bounds it. */
function inputOf(text: string): Record<string, unknown> {
  const violation = scanJsonText(text);
  let value: unknown;
  try {
    if (violation !== undefined) throw new Error(`${violation.kind} at ${violation.pointer}`);
    value = JSON.parse(text);
  } catch (err) {
    throw new HelixError('I-REQ-JSON', { message: `--input is not a JSON object the host accepts: ${(err as Error).message}.` });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HelixError('I-REQ-JSON', { message: '--input is not a JSON object.' });
  return value as Record<string, unknown>;
}

/** Opens a host over the submitting store for `body`, and closes it. */
async function withHost(
  opts: MakeOptions,
  body: (host: Host, call: JobCall & { readonly tool_version: string }) => Promise<void>,
  toolId: string,
  what: 'job bundle' | 'job array' = 'job bundle',
  checkTools?: (tools: OfferedTools, call: JobCall) => void,
): Promise<void> {
  const input = inputOf(opts.input);
  // Checked before the store is opened (or, in a home without one, made).
  checkNewDirectory(opts.dir, what);
  const host = await openHost(opts, (tools) => {
    checkVersionRange(opts.versionRange);
    toolOffered(toolId, opts.versionRange)(tools);
    checkTools?.(tools, { tool_id: toolId, input });
  });
  try {
    const constraints = {
      ...(opts.timeoutMs === undefined ? {} : { timeout_ms: opts.timeoutMs }),
      ...(opts.memoryMb === undefined ? {} : { memory_mb_limit: opts.memoryMb }),
    };
    await body(host, { tool_id: toolId, tool_version: opts.versionRange, input, constraints });
  } finally {
    await host.close();
  }
}

/** The options `bundle` and `submit` share. */
function makeOptions(cmd: Command): Command {
  return callOptions(hostOptions(cmd))
    .requiredOption('--input <json>', 'the input, a JSON object')
    .requiredOption('--dir <dir>', 'a new or empty directory for the bundle(s)')
    .option('--home <dir>', 'Helix home holding the submitting store (default: $HELIX_HOME or ./.helix)');
}

/** Adds the `job` commands to the program. */
export function registerJobCommands(program: Command): void {
  const job = program
    .command('job')
    .description('fan tool calls out to other machines (a Slurm job array) and collect their runs into the store');
  makeOptions(
    job
      .command('bundle')
      .description('write the job bundle of one call: what `helix job run` executes on a node')
      .argument('<tool>', 'tool id'),
  ).action((toolId: string, opts: MakeOptions) =>
    reporting(async () => {
      await withHost(opts, async (host, call) => printJson({ bundle: opts.dir, ...(await host.jobs.bundle(call, opts.dir)) }), toolId);
    }),
  );
  makeOptions(
    job
      .command('submit')
      .description('fan a call out over artifacts: one job bundle per artifact, submitted as one Slurm job array')
      .argument('<tool>', 'tool id'),
  )
    .requiredOption('--over <pointer>', 'the input field each element sets to its artifact, e.g. /sequences')
    .requiredOption('--artifacts <ids>', 'the artifact ids, separated by commas (one array element each)')
    .option('--no-submit', 'write the bundles and array.json, but do not call sbatch')
    .option('--partition <name>', "Slurm partition (default: the first the policy's slurm section allows the tool)")
    .option('--account <name>', 'Slurm account (default: the first allowed)')
    .option('--qos <name>', 'Slurm QOS (default: the first allowed)')
    .option('--time-minutes <n>', "each element's wall time (default: the policy's ceiling)", positiveInt('--time-minutes'))
    .option('--cpus-per-task <n>', "each element's CPUs (default: the policy's ceiling)", positiveInt('--cpus-per-task'))
    .option('--memory-mib <n>', "each element's memory (default: the policy's ceiling)", positiveInt('--memory-mib'))
    .action(
      (
        toolId: string,
        opts: MakeOptions & Omit<ArrayResources, 'memoryMiB'> & { memoryMib?: number; over: string; artifacts: string; submit: boolean },
      ) =>
        reporting(async () => {
          const { checkOver, submitJobArray } = await import('../host/6-faces/fanout/job-array.js');
          const artifacts = opts.artifacts
            .split(',')
            .map((a) => a.trim())
            .filter((a) => a !== '');
          const { partition, account, qos, timeMinutes, cpusPerTask, memoryMib } = opts;
          const resources = Object.fromEntries(
            Object.entries({ partition, account, qos, timeMinutes, cpusPerTask, memoryMiB: memoryMib }).filter(([, v]) => v !== undefined),
          ) as ArrayResources;
          await withHost(
            opts,
            async (host, call) =>
              printJson(await submitJobArray(host, call, opts.over, artifacts, opts.dir, { submit: opts.submit, resources })),
            toolId,
            'job array',
            (tools, call) => checkOver(() => tools, call, opts.over, artifacts),
          );
        }),
    );
  job
    .command('run')
    .description('execute a job bundle on this machine, on a node-local store, and write its result bundle (exit as `helix call`)')
    .argument('<bundle>', 'the job bundle directory')
    .option('--home <dir>', 'the node-local Helix home (default: a new directory under $TMPDIR, removed afterwards)')
    .option('--array-element', 'BUNDLE is a job array directory: run its element SLURM_ARRAY_TASK_ID')
    .action((bundle: string, opts: { home?: string; arrayElement?: boolean }) =>
      reporting(async () => {
        const { runJobBundle } = await import('../host/6-faces/fanout/run-job.js');
        const { elementBundle } = await import('../host/6-faces/fanout/array-slurm.js');
        const response = await runJobBundle(opts.arrayElement === true ? elementBundle(bundle) : bundle, {
          ...(opts.home === undefined ? {} : { home: opts.home }),
        });
        printJson(response);
        process.exitCode = exitCodeFor(response);
      }),
    );
  job
    .command('collect')
    .description(
      'bring the results of a job bundle, or of every element of a job array, into the store (exit 1 if one is refused or missing)',
    )
    .argument('<dir>', 'a job bundle or a job array directory')
    .option('--home <dir>', 'Helix home holding the submitting store (default: $HELIX_HOME or ./.helix)')
    .option('--wait-ms <n>', "wait up to this long for the array's Slurm jobs to end first", positiveInt('--wait-ms'))
    .option('--verify', 're-execute each run on a scratch store first, and collect only runs that reproduce')
    .action((dir: string, opts: { home?: string; waitMs?: number; verify?: boolean }) =>
      reporting(async () => {
        const { existsSync } = await import('node:fs');
        const path = await import('node:path');
        const { ARRAY_FILE, collectJobArray } = await import('../host/6-faces/fanout/job-array.js');
        const { readBundleText } = await import('../host/1-base/files/bundle-files.js');
        const { openJobs } = await import('../host/5-host/host-jobs.js');
        // A directory that is neither a job array nor a job bundle is refused before the store is opened.
        if (!existsSync(path.join(dir, ARRAY_FILE))) readBundleText(path.join(dir, 'job.json'));
        const jobs = openJobs(opts.home);
        try {
          if (!existsSync(path.join(dir, ARRAY_FILE))) return printJson(await jobs.collect(dir, { verify: opts.verify === true }));
          const collected = await collectJobArray(jobs, dir, opts.waitMs ?? 0, opts.verify === true);
          printJson(collected);
          if (collected.elements.some((e) => 'error' in e)) process.exitCode = EXIT.failed;
        } finally {
          await jobs.close();
        }
      }),
    );
  job
    .command('cancel')
    .description("cancel a job array's elements that have not ended (scancel); prints the Slurm job id and each element's state")
    .argument('<dir>', 'a job array directory')
    .action((dir: string) =>
      reporting(async () => {
        const { cancelJobArray } = await import('../host/6-faces/fanout/job-array.js');
        printJson(await cancelJobArray(dir));
      }),
    );
}
