// Which requirements of abi/ABI.md the checks back. Every requirement id the document defines
// (a list item that begins with its id in bold) must be cited by at least one check, and every
// id a check cites must be defined: the suite fails otherwise, whatever else it ran.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../host/1-base/paths.js';
import type { Check } from './check.js';

/** A requirement of ABI.md: its id, its section, and its text's first sentence. */
export interface Requirement {
  readonly id: string;
  readonly section: string;
  readonly summary: string;
}

/** What the checks cover. */
export interface Coverage {
  readonly requirements: number;
  readonly covered: number;
  /** Requirement ids no check cites. */
  readonly uncovered: readonly string[];
  /** Ids checks cite that ABI.md does not define, as `check id: ABI id`. */
  readonly unknown: readonly string[];
  /** Each requirement with the checks citing it. */
  readonly map: readonly (Requirement & { readonly checks: readonly string[] })[];
}

const DEFINITION = /^- \*\*(ABI-[A-Z0-9]+-\d{3})\*\*\s*(.*)$/;

/** The requirements ABI.md defines, in its order. */
export function readRequirements(file = path.join(packageRoot(), 'abi', 'ABI.md')): Requirement[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: Requirement[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = /^#{2,4}\s+(.*)$/.exec(line);
    if (heading) section = heading[1]!;
    const m = DEFINITION.exec(line);
    if (!m) continue;
    let text = m[2]!;
    for (let j = i + 1; j < lines.length && /^\s{2,}\S/.test(lines[j]!); j++) text += ` ${lines[j]!.trim()}`;
    const sentence = /^(.*?[.:])(\s|$)/.exec(text)?.[1] ?? text;
    out.push({ id: m[1]!, section, summary: sentence.length > 240 ? `${sentence.slice(0, 239)}…` : sentence });
  }
  return out;
}

/** The coverage of `requirements` by `checks`. */
export function coverageOf(checks: readonly Check[], requirements: readonly Requirement[] = readRequirements()): Coverage {
  const defined = new Set(requirements.map((r) => r.id));
  const citing = new Map<string, string[]>();
  const unknown: string[] = [];
  for (const c of checks) {
    for (const id of c.abi) {
      if (!defined.has(id)) unknown.push(`${c.id}: ${id}`);
      citing.set(id, [...(citing.get(id) ?? []), c.id]);
    }
  }
  const map = requirements.map((r) => ({ ...r, checks: citing.get(r.id) ?? [] }));
  const uncovered = map.filter((r) => r.checks.length === 0).map((r) => r.id);
  return { requirements: requirements.length, covered: requirements.length - uncovered.length, uncovered, unknown, map };
}
