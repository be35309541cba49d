// Schema failures of an MCP message in words (`params.name must be a string, not a number`), so a
// client never sees a raw zod dump; also short, safe descriptions of values a client sent.
import type { z } from 'zod';

/** One failure: where in the message, and what is wrong there. */
export interface Violation {
  readonly path: string;
  readonly message: string;
}

type Issue = z.core.$ZodIssue;

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  null: 'null',
};

/** A dotted path such as `params._meta.progressToken` or `params.items[2]`. */
export function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg).slice(0, 64))}]`;
  }
  return out === '' ? 'the message' : out;
}

/** What kind of value `v` is, in words, without ever serializing it (it may be huge or deep). */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length <= 40 ? JSON.stringify(v) : 'a string';
  if (typeof v === 'number') return Number.isInteger(v) ? `the number ${v}` : 'a fractional number';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/** The value at `path` inside `root`, stepping only through plain objects and arrays. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const seg of path) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, seg)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function typeWords(expected: string): string {
  return TYPE_WORDS[expected] ?? expected;
}

function issueText(issue: Issue, where: string, actual: unknown, present: boolean): string {
  switch (issue.code) {
    case 'invalid_type':
      return present ? `${where} must be ${typeWords(issue.expected)}, not ${kindOf(actual)}` : `${where} is required`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `${where} must be ${JSON.stringify(issue.values[0])}`
        : `${where} must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_union': {
      // Each branch failing on its own type alone: say which types would do.
      const types = issue.errors.map((branch) =>
        branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0
          ? typeWords(branch[0]!.expected)
          : undefined,
      );
      if (present && types.every((t) => t !== undefined))
        return `${where} must be ${[...new Set(types)].join(' or ')}, not ${kindOf(actual)}`;
      return `${where} matches none of its allowed forms`;
    }
    case 'unrecognized_keys':
      return `${where} has ${issue.keys.length === 1 ? 'an unexpected member' : 'unexpected members'} ${issue.keys.map((k) => JSON.stringify(k.slice(0, 64))).join(', ')}`;
    case 'too_small':
      return `${where} must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters long' : issue.origin === 'array' ? ' items long' : ''}`;
    case 'too_big':
      return `${where} must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters long' : issue.origin === 'array' ? ' items long' : ''}`;
    case 'invalid_format':
      return `${where} must be a valid ${issue.format}`;
    default:
      return `${where} is invalid (${issue.message})`;
  }
}

/** The issues of a failed parse of `value`, each as a path and a sentence. */
export function violationsOf(issues: readonly Issue[], value: unknown): Violation[] {
  return issues.map((issue) => {
    const where = pathText(issue.path);
    const parent = valueAt(value, issue.path.slice(0, -1));
    const last = issue.path[issue.path.length - 1];
    const present =
      issue.path.length === 0 || (typeof parent === 'object' && parent !== null && last !== undefined && Object.hasOwn(parent, last));
    return { path: where, message: issueText(issue, where, valueAt(value, issue.path), present) };
  });
}

/** Violations joined into one message, the first few in full. */
export function violationsText(violations: readonly Violation[], max = 3): string {
  const shown = violations.slice(0, max).map((v) => v.message);
  if (violations.length > max) shown.push(`and ${violations.length - max} more (data.details.violations)`);
  return shown.join('; ');
}
