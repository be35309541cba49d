// The violations an error lists in details.violations, as lines a person reads. Each violation
// is a JSON pointer into the checked value with what its schema wanted and what came
// (`{ "path": "/gc_count", "message": "must be a string (found an integer)" }`), or already a
// line of text; every face that shows an error to a person (helix test and dev, the command
// line's messages, the MCP result text) shows them the same way.

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A violation's line: `POINTER: REASON`, `(root)` for the whole value. */
export function violationLine(v: unknown): string {
  if (typeof v === 'string') return v;
  if (isRecord(v) && typeof v.path === 'string' && typeof v.message === 'string')
    return `${v.path === '' ? '(root)' : v.path}: ${v.message}`;
  return JSON.stringify(v) ?? String(v);
}

/** The first `max` violations of an error's details as lines, and how many more there are. */
export function violationLines(details: unknown, max = Number.POSITIVE_INFINITY): { lines: string[]; more: number } {
  const list = isRecord(details) && Array.isArray(details.violations) ? (details.violations as unknown[]) : [];
  return { lines: list.slice(0, max).map(violationLine), more: Math.max(0, list.length - max) };
}
