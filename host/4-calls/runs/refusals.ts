// The capability calls a run's broker refused, and why (ABI-RUNID-009): read from the run's
// journal (what was called, in order, and the error the guest got) and the audit trail (the
// reason, which the guest never sees: every refused name gets the same `forbidden` bytes).
import { ERROR_CODES, HelixError, type JournalEntry, type RunRecord } from '../../../abi/index.js';
import { CAPABILITIES } from '../../../capabilities/index.js';
import { FORBIDDEN_REASONS } from '../broker/broker.js';
import { readAuditBetween } from '../../3-store/audit.js';
import { readJournal } from '../../3-store/journal.js';
import type { Store } from '../../3-store/open-store.js';

/** How the broker decided a call it did not answer with a result (the audit trail's `decision`). */
export type RefusalDecision = 'forbidden' | 'invalid' | 'refused' | 'aborted';

/** One refused capability call of a run. */
export interface RefusedCall {
  /** Its position in the run's journal. */
  readonly seq: number;
  /** The capability named, or null when the broker read no name (not an envelope, or past the call ceiling). */
  readonly capability: string | null;
  /** The broker's decision; null when the audit trail has no record of the call. */
  readonly decision: RefusalDecision | null;
  /** The error code the guest got, e.g. A-AUTH-FORBIDDEN. */
  readonly code: string;
  /** Why, from the audit trail (or the error's message without one). */
  readonly reason: string;
  /** What the author can do about it. */
  readonly hint: string;
}

const REFUSALS: ReadonlySet<string> = new Set(['forbidden', 'invalid', 'refused', 'aborted']);

/** The audit records of the run's capability calls, as (capability, decision, reason). */
interface CallAudit {
  readonly capability: string | null;
  readonly decision: string;
  readonly reason: string;
}

/**
 * The refused capability calls of the run's last attempt, in journal order. A call the audit
 * trail says `failed` (the capability ran and failed) is not a refusal and is left out.
 */
export function refusedCalls(store: Store, run: RunRecord): RefusedCall[] {
  const journal = readJournal(store, run.run_id);
  const trouble = journal.filter((e) => e.outcome !== 'ok');
  if (trouble.length === 0) return [];
  const audits = callAudits(store, run, journal.length);
  const out: RefusedCall[] = [];
  for (const e of trouble) {
    // Each journaled call has one audit record, in the same order; a name that differs means the
    // trail is not this attempt's (or was damaged), so the journal alone speaks.
    const a = audits?.[e.seq];
    const audit = a !== undefined && a.capability === e.name ? a : undefined;
    if (audit !== undefined && !REFUSALS.has(audit.decision)) continue;
    const code = e.error?.code ?? 'unknown';
    // Why a call was forbidden is only in the audit trail (the guest's answer says nothing); any
    // other refusal's own message, with its violations, says more than the trail's short tag.
    const reason = (audit?.decision === 'forbidden' ? audit.reason : undefined) ?? errorText(e) ?? audit?.reason ?? code;
    out.push({
      seq: e.seq,
      capability: e.name,
      decision: (audit?.decision as RefusalDecision | undefined) ?? null,
      code,
      reason,
      hint: hintFor(run.tool_id, e, code, reason),
    });
  }
  return out;
}

/**
 * The last `count` capability audit records of the run, within its last attempt's time window;
 * undefined when they cannot be read (the journal still lists the calls).
 */
function callAudits(store: Store, run: RunRecord, count: number): CallAudit[] | undefined {
  if (run.started_at === null) return undefined;
  const found: CallAudit[] = [];
  try {
    const until = run.finished_at === null ? Number.MAX_SAFE_INTEGER : run.finished_at + 1;
    for (const value of readAuditBetween(store, run.started_at, until)) {
      if (value.kind !== 'capability' || value.run_id !== run.run_id) continue;
      const capability = typeof value.capability === 'string' ? value.capability : null;
      found.push({ capability, decision: String(value.decision), reason: String(value.reason) });
    }
  } catch (err) {
    if (err instanceof HelixError) return undefined;
    throw err;
  }
  return found.length < count ? undefined : found.slice(found.length - count);
}

/** An error's message, with the violations it lists (`/path: message`), without its final period. */
function errorText(entry: JournalEntry): string | undefined {
  if (entry.error === null) return undefined;
  const list = entry.error.details.violations;
  const violations = Array.isArray(list)
    ? list.map((v) =>
        typeof v === 'object' && v !== null && 'path' in v && 'message' in v ? `${String(v.path)}: ${String(v.message)}` : String(v),
      )
    : [];
  const message = entry.error.message.replace(/\.$/, '');
  // Some messages list their violations already.
  const more = violations.filter((v) => !message.includes(v));
  return more.length === 0 ? message : `${message}: ${more.join('; ')}`;
}

/** Advice for the author, from the reason the broker recorded. */
function hintFor(toolId: string, entry: JournalEntry, code: string, reason: string): string {
  const name = entry.name ?? 'the capability';
  const scoped = entry.name !== null && CAPABILITIES.get(entry.name)?.scopeOf !== undefined;
  const listing = scoped ? `a scoped entry such as ${name}.<name>` : name;
  if (reason === FORBIDDEN_REASONS.unlisted) {
    return `The code of ${toolId} calls ${name}, which its manifest does not allow: add ${listing} to capabilities.allow (and grant it in the policy), or remove the call.`;
  }
  if (reason === FORBIDDEN_REASONS.ungranted)
    return `The manifest of ${toolId} allows ${name}, but the policy does not grant it: grant it under grants in the policy file.`;
  if (reason === FORBIDDEN_REASONS.unknown) return `This host has no capability ${name}; see README "Capabilities" for those it has.`;
  const scope = /^scope (\S+) /.exec(reason)?.[1];
  if (scope !== undefined && reason === FORBIDDEN_REASONS.scope(scope))
    return `Add ${scope} to capabilities.allow in the manifest of ${toolId} and grant it in the policy, or call ${name} with a scope the manifest lists.`;
  return entry.error?.hint ?? (ERROR_CODES as Record<string, { hint: string }>)[code]?.hint ?? '';
}
