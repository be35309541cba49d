// The label of an artifact a sequence tool derives from its input ("filtered reads.fq",
// "reverse complement of chr1.fa"): the caller's label when given, else a description built
// from the input's label or id, cut to what the host accepts.

import { ArtifactInfo } from "../caps/artifact";

/** Longest artifact label the host accepts, in UTF-16 units. */
export const MAX_ARTIFACT_LABEL_LENGTH: i32 = 200;

/**
 * `requested` when not null, else `prefix + " " + (input label or input id)`; either way cut
 * to MAX_ARTIFACT_LABEL_LENGTH without splitting a surrogate pair.
 *
 *     const label = outputLabel(input.getString("label"), "filtered", info);
 */
export function outputLabel(requested: string | null, prefix: string, input: ArtifactInfo): string {
  if (requested !== null) return clipText(requested, MAX_ARTIFACT_LABEL_LENGTH);
  const source = input.label;
  return clipText(prefix + " " + (source !== null ? source : input.id), MAX_ARTIFACT_LABEL_LENGTH);
}

/** Cuts text to at most `limit` UTF-16 units without splitting a surrogate pair. */
export function clipText(text: string, limit: i32): string {
  if (text.length <= limit) return text;
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last < 0xdc00) end--;
  return text.substring(0, end);
}
