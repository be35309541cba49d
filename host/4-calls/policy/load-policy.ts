// Loads the operator's policy (or the bundled default), expands `${VAR}` from the environment,
// validates it (every violation listed), and hashes its canonical form for run identity.
import { HelixError, type Policy, POLICY_MAX_BYTES, PolicySchema } from '../../../abi/index.js';
import { compileAllowPrivate } from '../../../capabilities/http-guard.js';
import { canonicalJson, sha256Digest } from '../../1-base/hashing.js';
import { readRegularFile } from '../../1-base/files/pack-files.js';
import { fieldPath, formatViolation, issueReason, type Violation } from '../../1-base/files/violation.js';
import { parseYamlText } from '../../1-base/files/yaml-document.js';
import { defaultPolicyDocument } from './default-policy.js';

/** A validated policy with where it came from and its hash. */
export interface LoadedPolicy {
  readonly policy: Policy;
  /** The policy file, or `(default)` for the bundled one. */
  readonly source: string;
  /** sha256 of the canonical policy after environment expansion (part of every run id). */
  readonly hash: string;
}

/** Options of loadPolicy. */
export interface LoadPolicyOptions {
  /** Environment for `${VAR}` expansion; default process.env plus PWD = the working directory. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Loads `file`, or the bundled default policy when `file` is undefined. */
export function loadPolicy(file?: string, options: LoadPolicyOptions = {}): LoadedPolicy {
  const env = options.env ?? { ...process.env, PWD: process.cwd() };
  if (file === undefined) return finish(defaultPolicyDocument(), '(default)', env, undefined);
  // Size and type are checked before reading: a FIFO or a huge file is refused at once (ABI-FILE-003, -005).
  const read = readRegularFile(file, POLICY_MAX_BYTES);
  if (!read.ok) throw policyError(file, [{ file, field: '-', reason: `cannot read the policy file: it ${read.reason}` }]);
  const doc = parseYamlText(read.bytes.toString('utf8'));
  if (!doc.ok) {
    throw policyError(
      file,
      doc.problems.map((p) => withLine({ file, field: fieldPath(p.path), reason: p.reason }, () => p.line, p.path)),
    );
  }
  return finish(doc.value, file, env, doc.lineOf);
}

function finish(
  raw: unknown,
  source: string,
  env: Readonly<Record<string, string | undefined>>,
  lineOf: ((path: readonly PropertyKey[]) => number | undefined) | undefined,
): LoadedPolicy {
  const violations: Violation[] = [];
  const expanded = expandEnv(raw, env, [], (path, reason) =>
    violations.push(withLine({ file: source, field: fieldPath(path), reason }, lineOf, path)),
  );
  const parsed = PolicySchema.safeParse(expanded);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      violations.push(withLine({ file: source, field: fieldPath(issue.path), reason: issueReason(issue) }, lineOf, issue.path));
    }
  }
  if (parsed.success) {
    // allowPrivate entries are checked here, at load, not first at an HTTP call.
    try {
      compileAllowPrivate(parsed.data.network.allowPrivate);
    } catch (err) {
      for (const v of (err as HelixError).details.violations as string[])
        violations.push({ file: source, field: v.split(':')[0]!, reason: v.slice(v.indexOf(':') + 2) });
    }
  }
  if (violations.length > 0 || !parsed.success) throw policyError(source, violations);
  return { policy: parsed.data, source, hash: sha256Digest(canonicalJson(parsed.data)) };
}

function withLine(
  v: Violation,
  lineOf: ((p: readonly PropertyKey[]) => number | undefined) | undefined,
  path: readonly PropertyKey[],
): Violation {
  const line = lineOf?.(path);
  return line === undefined ? v : { ...v, line };
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${NAME}` and `${NAME:-default}` in every string; an unset NAME without default is a violation. */
export function expandEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: PropertyKey[],
  report: (path: PropertyKey[], reason: string) => void,
): unknown {
  if (typeof value === 'string') {
    return value.replace(VAR, (whole, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      report(path, `environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
      return whole;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, [...path, i], report));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, [...path, k], report)]));
  }
  return value;
}

function policyError(source: string, violations: Violation[]): HelixError {
  return new HelixError('P-PRECOND-POLICY-INVALID', {
    message: `The policy ${source} is invalid (${violations.length} violation${violations.length === 1 ? '' : 's'}).`,
    details: { source, violations: violations.map(formatViolation) },
  });
}
