// Checks of what callers hand the artifact layer (ids, labels, type names, limits), so a bad
// value is refused with I-REQ-INPUT naming the field before anything is read or written.
import { ARTIFACT_ID_PATTERN, HelixError, RUN_ID_PATTERN } from '../../../abi/index.js';

/** A type name given to override detection: a lowercase word such as `fasta` or `gff3`. */
export const TYPE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** Longest label accepted; labels are for people, shown in one table cell. */
export const MAX_LABEL_CHARS = 200;

// Control characters would break the one-line table of `helix artifact list` and logs.
const CONTROL = /\p{Cc}/u;

function invalid(field: string, reason: string, hint: string): HelixError {
  return new HelixError('I-REQ-INPUT', {
    message: `Invalid ${field}: ${reason}.`,
    details: { violations: [`${field}: ${reason}`] },
    hint,
  });
}

/** The id, or I-REQ-INPUT when it is not an artifact id. */
export function checkArtifactId(id: unknown, field = 'artifact id'): string {
  if (typeof id !== 'string' || !ARTIFACT_ID_PATTERN.test(id)) {
    const shown = typeof id === 'string' ? JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}...` : id) : typeof id;
    throw invalid(
      field,
      `${shown} is not an artifact id (art_ followed by 26 Crockford base32 characters)`,
      'Copy the id from `helix artifact list` or from the import output, e.g. art_01JD3Q4Z8X9V0W1Y2Z3A4B5C6D.',
    );
  }
  return id;
}

/** The label (null when absent), or I-REQ-INPUT when it is too long or holds control characters. */
export function checkLabel(label: unknown): string | null {
  if (label === undefined || label === null) return null;
  if (typeof label !== 'string')
    throw invalid('label', `must be a string, got ${typeof label}`, 'Pass a short text label, e.g. --label "sample 7 reads".');
  if (label.length > MAX_LABEL_CHARS) {
    throw invalid(
      'label',
      `is ${label.length} characters long, above the limit of ${MAX_LABEL_CHARS}`,
      'Use a shorter label; put long descriptions elsewhere.',
    );
  }
  if (CONTROL.test(label))
    throw invalid('label', 'contains a control character (newline, tab, ...)', 'Use a single line of printable text.');
  return label;
}

/** The type override (undefined when absent), or I-REQ-INPUT when it is not a lowercase word. */
export function checkTypeName(type: unknown): string | undefined {
  if (type === undefined) return undefined;
  if (typeof type !== 'string' || !TYPE_NAME_PATTERN.test(type)) {
    const shown = typeof type === 'string' ? JSON.stringify(type) : typeof type;
    throw invalid(
      'type',
      `${shown} is not a lowercase word (a-z first, then a-z, 0-9 or _, at most 32 characters)`,
      'Pass a type such as fasta, fastq, vcf, json, csv, tsv or text, or omit it to detect the type.',
    );
  }
  return type;
}

/** The run id (null when absent), or I-REQ-INPUT when it is not a run id. */
export function checkRunId(runId: unknown): string | null {
  if (runId === undefined || runId === null) return null;
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) {
    throw invalid(
      'createdByRun',
      `${JSON.stringify(runId)} is not a run id (run_ followed by 32 hex digits)`,
      'Pass the run_id of the run that produced the artifact, or null.',
    );
  }
  return runId;
}

/** A byte limit, or I-REQ-INPUT when it is not a non-negative safe integer. */
export function checkByteLimit(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(
      field,
      `must be a non-negative integer number of bytes, got ${JSON.stringify(value)}`,
      `Pass ${field} as a whole number of bytes.`,
    );
  }
  return value;
}

/** A count or timestamp option, or I-REQ-INPUT naming the option. */
export function checkInteger(value: unknown, field: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalid(
      field,
      `must be an integer of at least ${min}, got ${JSON.stringify(value)}`,
      `Pass ${field} as a whole number >= ${min}.`,
    );
  }
  return value;
}
