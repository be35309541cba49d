// Reads the fields the build needs from a toolpack manifest and pins the module digest into it,
// editing the YAML document in place so comments, order and formatting survive.

import { createHash } from 'node:crypto';
import { isMap, isScalar, parseDocument, type Document } from 'yaml';
import { fieldPath, formatViolation } from '../../1-base/files/violation.js';
import { parseYamlText } from '../../1-base/files/yaml-document.js';

/** The manifest fields the build relies on; full validation belongs to the loader. */
export interface ManifestBuildFields {
  id: string;
  abi: 'helix/v1' | 'extism/v1';
  /** Module path as written, relative to the manifest. */
  module: string;
  /** Export to call: the manifest's `entrypoint`, else `execute`. */
  entrypoint: string;
  /** The digest currently written, or null. */
  digest: string | null;
  /** `capabilities.abiVersion` (1 when absent): 2 allows the bulk import (ABI-BULK-001). */
  capabilityAbiVersion: number;
}

/** `sha256:<hex>` of `bytes`, the form manifests carry. */
export function moduleDigest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Parses manifest text; throws with every YAML error and the field problems found. */
export function readManifestFields(text: string, file: string): ManifestBuildFields {
  const doc = parseManifest(text, file);
  const data = doc.toJS() as Record<string, unknown> | null;
  const problems: string[] = [];
  const field = (name: string): string | undefined => {
    const value = data?.[name];
    if (typeof value !== 'string' || value.length === 0) {
      problems.push(`${name} must be a non-empty string`);
      return undefined;
    }
    return value;
  };
  const id = field('id');
  const abi = field('abi');
  const module = field('module');
  if (abi !== undefined && abi !== 'helix/v1' && abi !== 'extism/v1') problems.push(`abi must be helix/v1 or extism/v1, not ${abi}`);
  const entrypoint = data?.entrypoint ?? 'execute';
  if (typeof entrypoint !== 'string') problems.push('entrypoint must be a string');
  if (abi === 'extism/v1' && data?.entrypoint === undefined) problems.push('entrypoint is required for extism/v1');
  const digest = data?.digest;
  if (digest !== undefined && digest !== null && typeof digest !== 'string') problems.push('digest must be a string');
  if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
  return {
    id: id!,
    abi: abi as ManifestBuildFields['abi'],
    module: module!,
    entrypoint: entrypoint as string,
    digest: typeof digest === 'string' ? digest : null,
    capabilityAbiVersion: capabilityAbiVersion(data),
  };
}

function capabilityAbiVersion(data: Record<string, unknown> | null): number {
  const capabilities = data?.capabilities;
  const version =
    typeof capabilities === 'object' && capabilities !== null ? (capabilities as { abiVersion?: unknown }).abiVersion : undefined;
  return typeof version === 'number' ? version : 1;
}

/** The start of the line holding `at`, and the end of that line (before its newline). */
function lineAround(text: string, at: number): { start: number; end: number } {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  const nl = text.indexOf('\n', at);
  return { start, end: nl === -1 ? text.length : nl };
}

/**
 * The text edit that writes `digest` without touching any other byte, when the manifest's shape
 * allows one: an empty `digest:` line gets its value (a trailing comment kept), and a missing one
 * becomes a new line after the `entrypoint` (or `module`) line, when that key and its value sit
 * on one line. Undefined otherwise.
 */
function textEdit(text: string, doc: Document, digest: string): string | undefined {
  if (!isMap(doc.contents)) return undefined;
  const items = doc.contents.items;
  const find = (key: string) => items.find((item) => isScalar(item.key) && item.key.value === key);
  const pair = find('digest');
  if (pair !== undefined) {
    if (!isScalar(pair.key) || pair.key.range === undefined || pair.key.range === null) return undefined;
    const { start, end } = lineAround(text, pair.key.range[0]);
    const m = /^(\s*digest\s*:)\s*(?:null|~)?(\s+#.*)?$/.exec(text.slice(start, end));
    return m === null ? undefined : `${text.slice(0, start)}${m[1]} ${digest}${m[2] ?? ''}${text.slice(end)}`;
  }
  const anchor = find('entrypoint') ?? find('module');
  if (anchor === undefined || !isScalar(anchor.key) || !isScalar(anchor.value)) return undefined;
  const keyRange = anchor.key.range;
  const valueRange = anchor.value.range;
  if (keyRange === undefined || keyRange === null || valueRange === undefined || valueRange === null) return undefined;
  const { start, end } = lineAround(text, keyRange[0]);
  if (valueRange[1] > end) return undefined;
  const indent = text.slice(start, keyRange[0]);
  if (indent.trim() !== '') return undefined;
  // Before the line's own break (CR LF kept as CR LF), so the new line ends as the others do.
  const at = text[end - 1] === '\r' ? end - 1 : end;
  const lineBreak = at === end ? '\n' : '\r\n';
  return `${text.slice(0, at)}${lineBreak}${indent}digest: ${digest}${text.slice(at)}`;
}

/**
 * Returns the manifest text with `digest` set to `digest`, and whether anything changed.
 * An existing digest value is replaced in place, byte for byte around it; an empty or missing
 * one is written by a text edit of its line (after `entrypoint`, or `module`, when missing), so
 * formatting and comments stay as they were; only a manifest too unusual for that goes through
 * the Document API.
 */
export function withDigest(text: string, digest: string, file: string): { text: string; changed: boolean } {
  const doc = parseManifest(text, file);
  if (!isMap(doc.contents)) throw new Error(`${file}: the manifest must be a YAML mapping`);
  const items = doc.contents.items;
  const pair = items.find((item) => isScalar(item.key) && item.key.value === 'digest');
  if (pair && isScalar(pair.value) && pair.value.value === digest) return { text, changed: false };

  let next: string;
  const range = pair && isScalar(pair.value) && typeof pair.value.value === 'string' ? pair.value.range : undefined;
  const edited = range ? undefined : textEdit(text, doc, digest);
  if (range) {
    next = text.slice(0, range[0]) + digest + text.slice(range[1]);
  } else if (edited !== undefined) {
    next = edited;
  } else {
    if (pair) {
      pair.value = doc.createNode(digest);
    } else {
      const after = ['entrypoint', 'module'].map((key) => items.findIndex((item) => isScalar(item.key) && item.key.value === key));
      const anchor = Math.max(...after);
      items.splice(anchor >= 0 ? anchor + 1 : items.length, 0, doc.createPair('digest', digest));
    }
    next = doc.toString();
  }
  assertOnlyDigestChanged(text, next, digest, file);
  return { text: next, changed: true };
}

function parseManifest(text: string, file: string): Document {
  // The loader's bounds first (depth, aliases, numbers): the edit below must not meet a document
  // that would overflow yaml's recursive composer or expand without end.
  const bounded = parseYamlText(text);
  if (!bounded.ok)
    throw new Error(
      bounded.problems
        .map((p) =>
          formatViolation({ file, field: fieldPath(p.path), reason: p.reason, ...(p.line === undefined ? {} : { line: p.line }) }),
        )
        .join('; '),
    );
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) throw new Error(`${file}: invalid YAML: ${doc.errors.map((error) => error.message).join('; ')}`);
  return doc;
}

// The edit is textual; prove it touched nothing but the digest before anything is written.
function assertOnlyDigestChanged(before: string, after: string, digest: string, file: string): void {
  const old = parseDocument(before).toJS() as Record<string, unknown>;
  const now = parseDocument(after).toJS() as Record<string, unknown>;
  const expected = JSON.stringify({ ...old, digest: undefined });
  if (now.digest !== digest || JSON.stringify({ ...now, digest: undefined }) !== expected) {
    throw new Error(`${file}: rewriting the digest would change other fields; fix the manifest's digest line by hand`);
  }
}
