// A violation found while loading a document (a toolpack manifest, schema or fixture, or a
// policy): where (file, field, line) and why. Loaders collect every one before deciding, so an
// author sees all problems at once.

/** One problem in one file. */
export interface Violation {
  /** The file, relative to the working directory where possible. */
  readonly file: string;
  /** Dotted field path inside the file (`limits.fuel`), or `-` for the file as a whole. */
  readonly field: string;
  /** What is wrong and, where it helps, what to do. */
  readonly reason: string;
  /** 1-based line in the file, where known. */
  readonly line?: number;
}

/** `file: field: reason` (with `:line` after the file where known), one line per violation. */
export function formatViolation(v: Violation): string {
  const where = v.line === undefined ? v.file : `${v.file}:${v.line}`;
  return `${where}: ${v.field}: ${v.reason}`;
}

/** Renders a zod/ajv style path (array of keys) as a dotted field path. */
export function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '-';
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
}

/** A zod issue's message, phrased for a person editing the file. */
export function issueReason(issue: { code: string; message: string }): string {
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return 'required field is missing';
  return issue.message;
}
