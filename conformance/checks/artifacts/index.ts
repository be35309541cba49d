// The artifacts category, in the report's order: artifacts and the import and export boundaries.
// A file becomes an artifact only when it is a regular file inside the import roots reached without
// links; a refusal stores nothing and holds nothing; stored bytes are checked on every read; an
// export never follows a link out of the export roots; an artifact a request names must exist.
import type { Check } from '../../check.js';
import { importChecks } from './imports.js';
import { storedArtifactChecks } from './stored.js';

/** The artifact checks. */
export const artifactChecks: readonly Check[] = [...importChecks, ...storedArtifactChecks];
