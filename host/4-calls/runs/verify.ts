// helix verify: re-execute a succeeded run offline against its journal, from the module and
// input kept in the store, and report whether it produces the same output bytes and output
// artifacts, or the first difference. Nothing is recorded and nothing outside the run's journal
// is consulted, except immutable artifacts and secret sources for calls the journal keeps by
// digest or not at all.
import { CAPABILITY_ABI_VERSION, HelixError, PolicySchema, type RunRecord } from '../../../abi/index.js';
import { createReplayBroker, type Departure } from '../broker/replay-broker.js';
import { canonicalJson } from '../../1-base/hashing.js';
import { keyedHex, readSecretKey, secretKeyPath } from '../broker/secret-key.js';
import { createEngine } from '../../2-sandbox/engine/engine.js';
import type { BrokerAnswer, BulkPart } from '../../2-sandbox/engine/protocol.js';
import { readBlobBytes } from '../../3-store/blobs.js';
import { readParams, readPolicy } from '../../3-store/documents.js';
import { brokenLink, readJournal } from '../../3-store/journal.js';
import { readModuleRecord } from '../../3-store/modules.js';
import type { Store } from '../../3-store/open-store.js';
import { invalidRecord } from '../../3-store/records.js';
import { prepareModule } from '../../2-sandbox/modules/module-pipeline.js';
import { requireRun } from './run-store.js';
import { checkStoredOutputs, WrittenOutputs } from './verify-outputs.js';

/** What a verification found. */
export interface VerifyReport {
  readonly run_id: string;
  readonly match: boolean;
  readonly checks: ReadonlyArray<{ readonly check: string; readonly ok: boolean; readonly detail?: string }>;
  /** Where the re-execution first differed (absent on a match). */
  readonly first_difference?: Departure | { readonly where: string; readonly expected: unknown; readonly actual: unknown };
}

interface CanonicalParams {
  readonly tool: { readonly entrypoint: string | null };
  readonly limits: { readonly fuel: number; readonly max_memory_pages: number; readonly max_output_bytes: number } | null;
}

/** Verifies `runId`; throws P-PRECOND-VERIFY when the run cannot be verified at all. */
export async function verifyRun(store: Store, runId: string, timeoutMs = 600_000): Promise<VerifyReport> {
  const run = requireRun(store, runId);
  const why = unverifiable(run);
  if (why !== undefined)
    throw new HelixError('P-PRECOND-VERIFY', {
      message: `Run ${runId} cannot be verified: ${why}.`,
      details: { run_id: runId, status: run.status },
    });
  const checks: Array<{ check: string; ok: boolean; detail?: string }> = [];
  const journal = readJournal(store, runId);
  const broken = brokenLink(journal, run.journal.head);
  checks.push({ check: 'journal hash chain', ok: broken === undefined, ...(broken === undefined ? {} : { detail: broken.reason }) });
  if (broken !== undefined)
    return {
      run_id: runId,
      match: false,
      checks,
      first_difference: { seq: broken.seq, reason: `the journal was altered: ${broken.reason}` },
    };

  const stored = await checkStoredOutputs(store, run);
  checks.push({
    check: 'stored outputs read back as recorded',
    ok: stored === undefined,
    ...(stored === undefined ? {} : { detail: `${stored.where}: ${stored.detail}` }),
  });
  if (stored !== undefined)
    return {
      run_id: runId,
      match: false,
      checks,
      first_difference: { where: stored.where, expected: stored.expected, actual: stored.actual },
    };

  const params = JSON.parse(readParams(store, run.params_hash) ?? 'null') as CanonicalParams | null;
  const policyText = readPolicy(store, run.policy_hash);
  if (params?.limits == null || policyText === undefined)
    throw new HelixError('P-PRECOND-VERIFY', {
      message: `Run ${runId} lacks its params or policy snapshot in the store.`,
      details: { run_id: runId },
    });
  const policyParsed = PolicySchema.safeParse(JSON.parse(policyText));
  if (!policyParsed.success)
    throw invalidRecord(
      'policies',
      run.policy_hash,
      'it is not a policy',
      policyParsed.error.issues.map((i) => `${i.path.join('.') || '(policy)'}: ${i.message}`),
    );
  const policy = policyParsed.data;
  const moduleBytes = await readBlobBytes(store, run.module_digest!.slice('sha256:'.length), 1 << 30);
  const input = await readBlobBytes(store, run.input_sha256!, 1 << 30);
  // The store's module record says which runtime ran the module (helix/v1 or extism/v1).
  const abi = readModuleRecord(store, run.module_digest!)?.abi === 'extism/v1' ? 'extism/v1' : 'helix/v1';
  const spec = { abi, id: run.tool_id, version: run.tool_version, digest: run.module_digest! } as const;
  const prepared = prepareModule(moduleBytes, spec, params.limits.max_memory_pages);
  const instrumented = prepared.instrumented;
  const compiled = await prepared.compiled;
  // A run that received a secret has keyed hashes (ABI-SECRET-008): they need the store's key.
  const keyed = journal.some((e) => e.keyed === true);
  const key = keyed ? readSecretKey(store.home) : undefined;
  if (keyed && key === undefined) {
    throw new HelixError('P-PRECOND-VERIFY', {
      message: `Run ${runId} received a secret, and its journal's hashes are keyed with the store's secret hash key, which is missing (${secretKeyPath(store.home)}).`,
      details: { run_id: runId, key: secretKeyPath(store.home) },
      hint: 'Restore the key file from a backup of this Helix home; without it the run cannot be verified.',
    });
  }
  const replay = createReplayBroker(store, policy, runId, run.tool_id, journal, key);
  const written = new WrittenOutputs(replay.guard);
  const handle = async (request: Uint8Array, bulk?: BulkPart): Promise<BrokerAnswer> => {
    // Noted before the answer goes to the worker, which takes a bulk read's bytes with it.
    const answer = await replay.handle(request, bulk);
    written.note(request, answer, bulk);
    return answer;
  };
  const engine = createEngine({ minThreads: 1, maxThreads: 1, spinMicros: 0 });
  try {
    const result = await engine.execute({
      module: {
        digest: run.module_digest!,
        abi,
        entrypoint: params.tool.entrypoint ?? 'execute',
        bytes: moduleBytes,
        instrumented,
        compiled,
        cap: params.limits.max_memory_pages,
      },
      input,
      limits: {
        fuel: params.limits.fuel,
        maxMemoryPages: params.limits.max_memory_pages,
        maxOutputBytes: params.limits.max_output_bytes,
        timeoutMs,
        maxInputBytes: input.length,
        maxCapabilityCalls: journal.length + 1,
      },
      broker: handle,
    });
    // A terminal capability_call (ABI-OUTPUT-002) was the run's last journaled call: make it again.
    if (result.kind === 'output' && result.output.status === 'capability_call') {
      const { name, args } = result.output.capability_call;
      await handle(new TextEncoder().encode(JSON.stringify({ abi_version: CAPABILITY_ABI_VERSION, name, args })));
    }
    const departed = replay.departure();
    checks.push({
      check: 'capability calls follow the journal',
      ok: departed === undefined,
      ...(departed === undefined ? {} : { detail: departed.reason }),
    });
    if (departed !== undefined) return { run_id: runId, match: false, checks, first_difference: departed };
    if (result.kind === 'fault') {
      checks.push({ check: 're-execution succeeds', ok: false, detail: `${result.code}: ${result.message}` });
      return { run_id: runId, match: false, checks, first_difference: { where: 'execution', expected: 'success', actual: result.code } };
    }
    const allCalls = replay.consumed() === journal.length;
    checks.push({
      check: 'every journaled call was made',
      ok: allCalls,
      ...(allCalls ? {} : { detail: `${replay.consumed()} of ${journal.length}` }),
    });
    const outputDigest = key === undefined ? result.outputSha256 : keyedHex(key, result.outputSha256);
    const sameOutput = outputDigest === run.output_sha256;
    checks.push({ check: 'same output bytes', ok: sameOutput });
    // The stored output value is the record a replay answers with: the re-execution's must be it.
    // A run that received a secret stored its output redacted (ABI-SECRET-007), so only its bytes' digest is compared.
    const replayedValue = result.output.status === 'ok' ? canonicalJson(result.output.output) : undefined;
    const storedValue = canonicalJson(run.result?.output ?? null);
    const sameValue = key !== undefined || replayedValue === undefined || replayedValue === storedValue;
    checks.push({
      check: 'same output value',
      ok: sameValue,
      ...(sameValue ? {} : { detail: 'the run record holds another output than the re-execution returned' }),
    });
    const sameFuel = result.fuelUsed === run.metrics?.fuel_used;
    checks.push({
      check: 'same fuel used',
      ok: sameFuel,
      ...(sameFuel ? {} : { detail: `${result.fuelUsed} now, ${run.metrics?.fuel_used} then` }),
    });
    const outputs = written.compare(run);
    checks.push({
      check: 'same output artifacts',
      ok: outputs === undefined,
      ...(outputs === undefined ? {} : { detail: `${outputs.where}: ${outputs.detail}` }),
    });
    const match = allCalls && sameOutput && sameValue && sameFuel && outputs === undefined;
    if (match) return { run_id: runId, match, checks };
    if (!allCalls)
      return { run_id: runId, match, checks, first_difference: { where: 'journal', expected: journal.length, actual: replay.consumed() } };
    if (!sameOutput)
      return { run_id: runId, match, checks, first_difference: { where: 'output', expected: run.output_sha256, actual: outputDigest } };
    if (!sameValue)
      return {
        run_id: runId,
        match,
        checks,
        first_difference: {
          where: 'output value',
          expected: JSON.parse(storedValue) as unknown,
          actual: JSON.parse(replayedValue!) as unknown,
        },
      };
    if (outputs !== undefined)
      return {
        run_id: runId,
        match,
        checks,
        first_difference: { where: outputs.where, expected: outputs.expected, actual: outputs.actual },
      };
    return { run_id: runId, match, checks, first_difference: { where: 'fuel', expected: run.metrics?.fuel_used, actual: result.fuelUsed } };
  } finally {
    await engine.close();
  }
}

function unverifiable(run: RunRecord): string | undefined {
  if (run.status !== 'succeeded') return `it is ${run.status}; only succeeded runs have a result to reproduce`;
  if (run.module_digest === null)
    return 'it ran no module (a host built-in, or a container toolpack, whose container cannot be run again offline)';
  if (run.input_sha256 === null || run.output_sha256 === null) return 'it was recorded without its input or output hash';
  return undefined;
}
