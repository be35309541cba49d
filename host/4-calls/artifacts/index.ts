// The artifact layer (README "Runs, artifacts and provenance"): import through a policy-gated
// boundary, content-addressed storage with type and preview, snapshot-bounded listing, verified
// export.
export {
  prepareArtifact,
  commitArtifact,
  storeArtifact,
  importInline,
  DEFAULT_INLINE_MAX_BYTES,
  type ArtifactMeta,
  type ArtifactSource,
  type PrepareOptions,
  type PreparedArtifact,
} from './prepare-artifact.js';
export { checkImport, importFile, importStream, type StreamImport } from './import-file.js';
export { exportArtifact, type ExportOptions } from './export-artifact.js';
export { getArtifact, listArtifacts, snapshotBoundary, type ListOptions, type SnapshotBoundary } from './query.js';
export { importRecordedArtifact, keepCollectedArtifact } from './recorded-artifacts.js';
export { detectType, MEDIA_TYPES, HEAD_BYTES, type DetectedType } from './detect-type.js';
export { PREVIEW_LINES, PREVIEW_BYTES } from './inspect-content.js';
export { PREVIEW_RECORDS, type RecordSummary } from './record-scanner.js';
