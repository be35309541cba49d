// The callable tools (toolpacks and built-ins) by id and version, and semver resolution of a request's `tool_version`
// to exactly one build (refused when ambiguous).
import semver from 'semver';
import { HelixError } from '../../abi/index.js';
import type { Tool } from './tools/tool.js';

/** Tools indexed for lookup. */
export class ToolRegistry {
  readonly #byId = new Map<string, Tool[]>();
  /** Resolutions already made; semver range matching is the costliest step of a small call. */
  readonly #resolved = new Map<string, Tool>();

  constructor(tools: readonly Tool[]) {
    for (const t of tools) {
      const list = this.#byId.get(t.id) ?? [];
      list.push(t);
      this.#byId.set(t.id, list);
    }
    for (const list of this.#byId.values()) list.sort((a, b) => semver.rcompare(a.version, b.version));
  }

  /** Every tool, sorted by id then newest version first. */
  list(): Tool[] {
    return [...this.#byId.keys()].sort().flatMap((id) => this.#byId.get(id) ?? []);
  }

  /**
   * The newest version of `id` satisfying `range`. A range spanning two major versions is
   * ambiguous (majors differ in contract), unless it names an exact version.
   */
  resolve(id: string, range: string): Tool {
    const key = `${id}\u0000${range}`;
    const hit = this.#resolved.get(key);
    if (hit !== undefined) return hit;
    const tool = this.#resolveUncached(id, range);
    // Callers choose the ranges, so the cache is bounded.
    if (this.#resolved.size >= 1024) this.#resolved.clear();
    this.#resolved.set(key, tool);
    return tool;
  }

  #resolveUncached(id: string, range: string): Tool {
    const list = this.#byId.get(id);
    if (list === undefined) {
      throw new HelixError('C-CONTRACT-TOOL-UNKNOWN', {
        message: `No tool "${id}" is loaded.`,
        details: { tool_id: id, available: [...this.#byId.keys()].sort() },
      });
    }
    if (semver.validRange(range) === null) {
      throw new HelixError('I-REQ-ENVELOPE', {
        message: `tool_version "${range}" is not a semver version or range.`,
        details: { violations: [{ path: '/tool_version', message: 'must be a semver version or range such as 1.x or ^1.2.0' }] },
      });
    }
    const matching = list.filter((t) => semver.satisfies(t.version, range, { includePrerelease: true }));
    const available = list.map((t) => t.version);
    if (matching.length === 0) {
      throw new HelixError('C-CONTRACT-VERSION-NO-MATCH', {
        message: `No version of "${id}" satisfies "${range}".`,
        details: { tool_id: id, requested: range, available },
      });
    }
    const majors = new Set(matching.map((t) => semver.major(t.version)));
    if (majors.size > 1) {
      throw new HelixError('C-CONTRACT-VERSION-AMBIGUOUS', {
        message: `"${range}" matches ${[...majors]
          .sort()
          .map((m) => `${m}.x`)
          .join(' and ')} of "${id}".`,
        details: { tool_id: id, requested: range, matching: matching.map((t) => t.version) },
      });
    }
    return matching[0]!;
  }
}
