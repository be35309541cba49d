// artifact.stat / artifact.list / artifact.read / artifact.write, one call each. For data
// larger than one piece use ArtifactReader and ArtifactWriter, which loop over these.
// artifactReadInto and artifactWriteFrom take the bulk path (capability ABI 2): raw bytes
// straight into or out of a buffer of the tool's memory, no JSON string around them.

import { BULK_MAX_PIECE } from "../abi";
import { Base64 } from "../base64";
import { callCapability, callCapabilityBulk } from "../capability";
import { JSONArray, JSONKind, JSONObject, JSONValue } from "../json/value";
import { badResult, CAPABILITY_REQUEST_CODE, CapabilityStatus } from "./status";

/** Largest piece one `artifact.read` returns or one `artifact.write` sends, in bytes (1 MiB). */
export const ARTIFACT_MAX_PIECE: i32 = 1024 * 1024;

/** Metadata of an artifact, as `artifact.stat` and `artifact.list` return it. */
export class ArtifactInfo extends CapabilityStatus {
  id: string = "";
  sha256: string = "";
  /** Stored size in bytes (of the compressed bytes for a gzip artifact). */
  size: i64 = 0;
  /** Artifact type, e.g. `fasta`. */
  type: string = "";
  /** `gzip`, or empty when the artifact is stored uncompressed. */
  compression: string = "";
  mediaType: string = "";
  label: string | null = null;
  /** Creation time, Unix milliseconds. */
  createdAt: i64 = 0;
  /** The run that wrote it, or null for an imported artifact. */
  createdByRun: string | null = null;

  /** True when the content is gzip: read it with `decompress` to get the text. */
  get isGzip(): bool {
    return this.compression == "gzip";
  }
}

/** The result of `Artifact.list`. */
export class ArtifactList extends CapabilityStatus {
  artifacts: Array<ArtifactInfo> = [];
}

/** One piece of text read with `Artifact.read`. */
export class ArtifactPiece extends CapabilityStatus {
  /** The text (utf8 pieces end on a character boundary, so `data` never splits one). */
  data: string = "";
  /** Byte offset the piece starts at. */
  offset: i64 = 0;
  /** Byte offset to read next: `offset` plus the bytes `data` holds. */
  nextOffset: i64 = 0;
  /** True when the piece reaches the end of the content. */
  eof: bool = false;
}

/** One piece of bytes read with `Artifact.readBytes`. */
export class ArtifactBytes extends CapabilityStatus {
  bytes: Uint8Array = new Uint8Array(0);
  offset: i64 = 0;
  nextOffset: i64 = 0;
  eof: bool = false;
}

/** The result of one `artifact.write` piece; with `final`, the sealed artifact. */
export class ArtifactWritten extends CapabilityStatus {
  role: string = "";
  /** Bytes the host accepted, as it reports them. */
  bytes: i64 = 0;
  /** The new artifact's id, set by the final piece. */
  artifactId: string | null = null;
  sha256: string = "";
  size: i64 = 0;
}

/** Single-call wrappers of the `artifact.*` capabilities. */
export class Artifact {
  /** Metadata of the artifact `id` (`P-PRECOND-ARTIFACT-NOT-FOUND` when there is none). */
  static stat(id: string): ArtifactInfo {
    const out = new ArtifactInfo();
    const reply = callCapability("artifact.stat", new JSONObject().setString("artifact_id", id));
    if (!reply.ok) out.takeError(reply);
    else readInfo(reply.result, out, "artifact.stat");
    return out;
  }

  /** Up to `limit` (1-1000) artifacts in creation order, only of `type` when given. */
  static list(limit: i32 = 100, type: string | null = null): ArtifactList {
    const out = new ArtifactList();
    const args = new JSONObject().setInteger("limit", limit);
    if (type !== null) args.setString("type", type);
    const reply = callCapability("artifact.list", args);
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const items: JSONArray | null = reply.result.isObject ? changetype<JSONObject>(reply.result).getArray("artifacts") : null;
    if (items === null) {
      badResult(out, "artifact.list", "artifacts");
      return out;
    }
    for (let i = 0; i < items.length; i++) {
      const info = new ArtifactInfo();
      const item = items.get(i);
      if (item === null || !readInfo(item, info, "artifact.list")) {
        out.failFrom(info);
        out.artifacts = [];
        return out;
      }
      out.artifacts.push(info);
    }
    return out;
  }

  /**
   * Up to `length` bytes (at most 1 MiB) from byte `offset` as text; with `decompress`, of the
   * gunzipped content (offsets then count decompressed bytes). Continue at `nextOffset`.
   */
  static read(id: string, offset: i64 = 0, length: i32 = ARTIFACT_MAX_PIECE, decompress: bool = false): ArtifactPiece {
    const out = new ArtifactPiece();
    const reply = callCapability("artifact.read", readArgs(id, offset, length, decompress, "utf8"));
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const result = reply.result.isObject ? changetype<JSONObject>(reply.result) : new JSONObject();
    const data = result.getString("data");
    if (data === null) {
      badResult(out, "artifact.read", "data");
      return out;
    }
    if (!readPosition(result, out)) return out;
    out.data = data;
    out.offset = result.getInteger("offset", offset);
    out.nextOffset = result.getInteger("next_offset", -1);
    out.eof = result.getBool("eof");
    return out;
  }

  /** As `read`, for binary content: the piece travels as base64 and comes back decoded. */
  static readBytes(id: string, offset: i64 = 0, length: i32 = ARTIFACT_MAX_PIECE, decompress: bool = false): ArtifactBytes {
    const out = new ArtifactBytes();
    const reply = callCapability("artifact.read", readArgs(id, offset, length, decompress, "base64"));
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const result = reply.result.isObject ? changetype<JSONObject>(reply.result) : new JSONObject();
    const data = result.getString("data");
    const bytes = data !== null ? Base64.decode(data) : null;
    if (bytes === null) {
      badResult(out, "artifact.read", "data");
      return out;
    }
    if (!readPosition(result, out)) return out;
    out.bytes = bytes;
    out.offset = result.getInteger("offset", offset);
    out.nextOffset = result.getInteger("next_offset", -1);
    out.eof = result.getBool("eof");
    return out;
  }

  /**
   * Sends one piece of text to the output `role` (declared in the manifest's
   * `declaredOutputs`); `final` seals it and the result carries the new artifact's id.
   * `data` must be at most 1 MiB as UTF-8. ArtifactWriter pieces longer output for you.
   */
  static write(role: string, data: string, final: bool = false, type: string | null = null, label: string | null = null): ArtifactWritten {
    const args = new JSONObject().setString("role", role).setString("data", data).setString("encoding", "utf8").setBool("final", final);
    return sendWrite(args, type, label);
  }

  /** As `write`, for bytes (sent as base64, at most 1 MiB decoded). */
  static writeBytes(role: string, data: Uint8Array, final: bool = false, type: string | null = null, label: string | null = null): ArtifactWritten {
    const args = new JSONObject().setString("role", role).setString("data", Base64.encode(data)).setString("encoding", "base64").setBool("final", final);
    return sendWrite(args, type, label);
  }
}

/** One bulk read (`artifactReadInto`): how many bytes landed in the buffer, and where to go on. */
export class BulkRead extends CapabilityStatus {
  /** Bytes copied into the buffer (0 at the end of the content). */
  bytes: i32 = 0;
  /** Byte offset to read next: the offset read plus `bytes`. */
  nextOffset: i64 = 0;
  /** True when the piece reaches the end of the content. */
  eof: bool = false;
}

/**
 * Reads up to `bufLen` bytes (at most BULK_MAX_PIECE) of artifact `artifactId` from byte `offset`
 * straight into [buf, buf+bufLen), raw: no UTF-8 cut, no encoding. With `decompress`, of the
 * gunzipped content (offsets then count decompressed bytes). Needs `capabilities.abiVersion: 2`.
 */
export function artifactReadInto(artifactId: string, offset: i64, buf: usize, bufLen: i32, decompress: bool): BulkRead {
  const out = new BulkRead();
  const args = new JSONObject().setString("artifact_id", artifactId).setInteger("offset", offset).setBool("decompress", decompress);
  const reply = callCapabilityBulk("artifact.read", args, buf, bufLen);
  if (!reply.ok) {
    out.takeError(reply);
    return out;
  }
  const result = reply.result.isObject ? changetype<JSONObject>(reply.result) : new JSONObject();
  const bytes = result.getInteger("bytes", -1);
  if (bytes < 0 || bytes > <i64>bufLen) {
    badResult(out, "artifact.read", "bytes");
    return out;
  }
  if (!readPosition(result, out)) return out;
  out.bytes = <i32>bytes;
  out.nextOffset = result.getInteger("next_offset", -1);
  out.eof = result.getBool("eof");
  return out;
}

/**
 * Sends the `len` bytes at `buf` (at most BULK_MAX_PIECE; 0 with `final` only seals) to the
 * output `role`, raw; `final` seals it and the result carries the new artifact's id. Needs
 * `capabilities.abiVersion: 2`.
 */
export function artifactWriteFrom(role: string, buf: usize, len: i32, final: bool, type: string | null, label: string | null): ArtifactWritten {
  const args = new JSONObject().setString("role", role).setBool("final", final);
  if (type !== null && type.length > 0) args.setString("type", type);
  if (label !== null && label.length > 0) args.setString("label", label);
  const out = new ArtifactWritten();
  if (len < 0 || len > BULK_MAX_PIECE) {
    out.fail(CAPABILITY_REQUEST_CODE, "artifactWriteFrom: a piece must be 0 to BULK_MAX_PIECE bytes, not " + len.toString(), "write in pieces of at most 4 MiB");
    return out;
  }
  const reply = callCapabilityBulk("artifact.write", args, buf, len);
  if (!reply.ok) out.takeError(reply);
  else readWritten(reply.result, out);
  return out;
}

function readArgs(id: string, offset: i64, length: i32, decompress: bool, encoding: string): JSONObject {
  return new JSONObject()
    .setString("artifact_id", id)
    .setInteger("offset", offset)
    .setInteger("length", length)
    .setBool("decompress", decompress)
    .setString("encoding", encoding);
}

// Checks next_offset and eof, which the readers rely on to make progress.
function readPosition(result: JSONObject, out: CapabilityStatus): bool {
  const next = result.get("next_offset");
  const eof = result.get("eof");
  if (next === null || !next.isNumber || result.getInteger("next_offset", -1) < 0) {
    badResult(out, "artifact.read", "next_offset");
    return false;
  }
  if (eof === null || !eof.isBool) {
    badResult(out, "artifact.read", "eof");
    return false;
  }
  return true;
}

function sendWrite(args: JSONObject, type: string | null, label: string | null): ArtifactWritten {
  if (type !== null && type.length > 0) args.setString("type", type);
  if (label !== null && label.length > 0) args.setString("label", label);
  const out = new ArtifactWritten();
  const reply = callCapability("artifact.write", args);
  if (!reply.ok) out.takeError(reply);
  else readWritten(reply.result, out);
  return out;
}

/** Fills `out` from an `artifact.write` result; false (and `out` failed) when it has the wrong shape. */
export function readWritten(value: JSONValue, out: ArtifactWritten): bool {
  if (value.kind != JSONKind.OBJECT) {
    badResult(out, "artifact.write", "role");
    return false;
  }
  const result = changetype<JSONObject>(value);
  const role = result.getString("role");
  if (role === null) {
    badResult(out, "artifact.write", "role");
    return false;
  }
  out.role = role;
  out.bytes = result.getInteger("bytes");
  out.artifactId = result.getString("artifact_id");
  const sha256 = result.getString("sha256");
  if (sha256 !== null) out.sha256 = sha256;
  out.size = result.getInteger("size");
  return true;
}

// Fills `out` from a stat or list entry; false (and `out` failed) when it has the wrong shape.
function readInfo(value: JSONValue, out: ArtifactInfo, capability: string): bool {
  if (value.kind != JSONKind.OBJECT) {
    badResult(out, capability, "id");
    return false;
  }
  const result = changetype<JSONObject>(value);
  const id = result.getString("id");
  const size = result.getInteger("size", -1);
  if (id === null) {
    badResult(out, capability, "id");
    return false;
  }
  if (size < 0) {
    badResult(out, capability, "size");
    return false;
  }
  out.id = id;
  out.size = size;
  const sha256 = result.getString("sha256");
  if (sha256 !== null) out.sha256 = sha256;
  const type = result.getString("type");
  if (type !== null) out.type = type;
  const compression = result.getString("compression");
  if (compression !== null) out.compression = compression;
  const mediaType = result.getString("media_type");
  if (mediaType !== null) out.mediaType = mediaType;
  out.label = result.getString("label");
  out.createdAt = result.getInteger("created_at");
  out.createdByRun = result.getString("created_by_run");
  return true;
}
