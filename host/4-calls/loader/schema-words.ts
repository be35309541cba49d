// Ajv's findings in words a person reads: one line per place (a JSON pointer), saying the rule
// and what was found there. Used for a value that fails a tool's schema (I-REQ-INPUT, the output
// check) and for a schema that fails JSON Schema's own meta-schema (a load violation).
import type { ErrorObject } from 'ajv';

/** One finding: where (JSON pointer into the checked value) and what, in words. */
export interface Finding {
  readonly pointer: string;
  readonly reason: string;
  readonly keyword: string;
}

const BRANCHING = new Set(['anyOf', 'oneOf', 'if']);
/** Longest quoted value in a message. */
const SHOWN_MAX = 60;

/**
 * Ajv's errors for one validation of `value`, in words, one per place and rule. A branching
 * keyword (anyOf, oneOf, if) is dropped where a more specific error explains it; at one place, a
 * type error is dropped when another branch of the same choice had the right type and failed on
 * something else (so `type: "strin"` reads as a bad type name, not "must be an array"), and the
 * type errors left are merged ("must be a string or an array").
 */
export function describeErrors(errors: readonly ErrorObject[], value: unknown): Finding[] {
  const deeper = (e: ErrorObject) =>
    errors.some(
      (o) => o !== e && !BRANCHING.has(o.keyword) && (o.instancePath === e.instancePath || o.instancePath.startsWith(`${e.instancePath}/`)),
    );
  let kept = errors.filter((e) => !(BRANCHING.has(e.keyword) && deeper(e)));
  kept = kept.filter(
    (e) =>
      e.keyword !== 'type' ||
      !inChoice(e, errors) ||
      !kept.some((o) => o.instancePath === e.instancePath && o.keyword !== 'type' && !BRANCHING.has(o.keyword)),
  );
  // Type errors at one place merge into the first of them.
  const typesAt = new Map<string, string[]>();
  const shownErrors: ErrorObject[] = [];
  for (const e of kept) {
    if (e.keyword === 'type') {
      const named = String((e.params as { type: unknown }).type).split(',');
      const types = typesAt.get(e.instancePath);
      if (types !== undefined) {
        types.push(...named.filter((t) => !types.includes(t)));
        continue;
      }
      typesAt.set(e.instancePath, named);
    }
    shownErrors.push(e);
  }
  return shownErrors.map((e) => {
    const found = at(value, e.instancePath);
    const types = typesAt.get(e.instancePath);
    const reason =
      e.keyword === 'type' && types !== undefined
        ? `must be ${alternatives(types.map(article))} (found ${kindOf(found)})`
        : reasonOf(e, found);
    return { pointer: e.instancePath, reason, keyword: e.keyword };
  });
}

// Whether an error comes from one branch of an anyOf/oneOf at its own place: then another
// branch may explain the value better.
function inChoice(e: ErrorObject, errors: readonly ErrorObject[]): boolean {
  return errors.some(
    (o) =>
      (o.keyword === 'anyOf' || o.keyword === 'oneOf') && o.instancePath === e.instancePath && e.schemaPath.startsWith(`${o.schemaPath}/`),
  );
}

/** One Ajv error in words; `found` is the value at its place. */
export function reasonOf(e: ErrorObject, found: unknown): string {
  const p = e.params as Record<string, unknown>;
  const is = ` (found ${shown(found)})`;
  switch (e.keyword) {
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : shown(v)));
      // JSON Schema's type names, met when a schema misspells one.
      if (allowed.includes('integer') && allowed.includes('null') && allowed.length === 7)
        return `${shown(found)} is not a JSON Schema type (one of: ${allowed.join(', ')})`;
      return `${shown(found)} is not one of the allowed values: ${allowed.join(', ')}`;
    }
    case 'const':
      return `must be ${shown(p.allowedValue)}${is}`;
    case 'type':
      return `must be ${alternatives(String(p.type).split(',').map(article))} (found ${kindOf(found)})`;
    case 'required':
      return `is missing required property "${String(p.missingProperty)}"`;
    case 'additionalProperties':
      return `has unknown property "${String(p.additionalProperty)}"`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${({ minimum: 'at least', maximum: 'at most', exclusiveMinimum: 'greater than', exclusiveMaximum: 'less than' } as Record<string, string>)[e.keyword]} ${String(p.limit)}${is}`;
    case 'minLength':
    case 'maxLength':
      return `must be ${e.keyword === 'minLength' ? 'at least' : 'at most'} ${String(p.limit)} characters long (found ${typeof found === 'string' ? [...found].length : '?'})`;
    case 'minItems':
    case 'maxItems':
      return `must have ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${String(p.limit)} items (found ${Array.isArray(found) ? found.length : '?'})`;
    case 'minProperties':
    case 'maxProperties':
      return `must have ${e.keyword === 'minProperties' ? 'at least' : 'at most'} ${String(p.limit)} properties`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}${is}`;
    case 'pattern':
      return `must match the pattern ${String(p.pattern)}${is}`;
    case 'format':
      return p.format === 'regex' ? `${shown(found)} is not a valid regular expression` : `must be a valid ${String(p.format)}${is}`;
    case 'uniqueItems':
      return `must not repeat items (items ${String(p.j)} and ${String(p.i)} are equal)`;
    case 'anyOf':
      return `does not match any of the allowed forms${is}`;
    case 'oneOf':
      return p.passingSchemas === null
        ? `does not match any of the allowed forms${is}`
        : 'matches more than one of the forms of a oneOf: it must match exactly one';
    case 'not':
      return `must not match the schema under "not"${is}`;
    case 'propertyNames':
      return `has a property name that is not allowed: "${String(p.propertyName)}"`;
    case 'dependentRequired':
    case 'dependencies':
      return `has "${String(p.property)}", so it must also have "${String(p.missingProperty)}"`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** The value at a JSON pointer of `root`, or undefined. */
export function at(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function article(type: string): string {
  return type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function alternatives(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

// What kind of JSON value something is, with the value when it is short.
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const kind =
    typeof value === 'number'
      ? Number.isInteger(value)
        ? 'an integer'
        : 'a number'
      : typeof value === 'string'
        ? 'a string'
        : typeof value === 'boolean'
          ? 'a boolean'
          : 'nothing';
  return kind === 'nothing' ? kind : `${kind}, ${shown(value)}`;
}

// A value as JSON, cut to a readable length.
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= SHOWN_MAX ? text : `${text.slice(0, SHOWN_MAX)}…`;
}
