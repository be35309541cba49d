// kv.get / kv.put / kv.delete / kv.list: small JSON values in the tool's own namespace
// (keys up to 256 bytes, values up to 64 KiB of JSON, lists up to 1000 keys).

import { callCapability } from "../capability";
import { JSONArray, JSONKind, JSONNull, JSONObject, JSONValue } from "../json/value";
import { badResult, CapabilityStatus } from "./status";

/** A value read with `Kv.get`; when `ok` is false the call failed and `value` is JSON null. */
export class KvValue extends CapabilityStatus {
  value: JSONValue = new JSONNull();

  /** The value as an object, or null when it is something else. */
  get object(): JSONObject | null {
    return this.value.kind == JSONKind.OBJECT ? changetype<JSONObject>(this.value) : null;
  }
}

/** The result of `Kv.delete`. */
export class KvDeleted extends CapabilityStatus {
  /** True when the key existed. */
  deleted: bool = false;
}

/** The result of `Kv.list`. */
export class KvKeys extends CapabilityStatus {
  /** Keys in order. */
  keys: Array<string> = [];
}

/** The `kv.*` capabilities. */
export class Kv {
  /**
   * The value under `key`; null when the key is absent. A failed call is not null: it is a
   * KvValue with `ok` false and the error, so check `ok` before `value`.
   */
  static get(key: string): KvValue | null {
    const out = new KvValue();
    const reply = callCapability("kv.get", new JSONObject().setString("key", key));
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const result = reply.result.isObject ? changetype<JSONObject>(reply.result) : null;
    const found = result !== null ? result.get("found") : null;
    if (result === null || found === null || !found.isBool) {
      badResult(out, "kv.get", "found");
      return out;
    }
    if (!result.getBool("found")) return null;
    const value = result.get("value");
    if (value !== null) out.value = value;
    return out;
  }

  /** Stores `value` under `key`, replacing any previous value. */
  static put(key: string, value: JSONValue): CapabilityStatus {
    const out = new CapabilityStatus();
    const reply = callCapability("kv.put", new JSONObject().setString("key", key).set("value", value));
    if (!reply.ok) out.takeError(reply);
    return out;
  }

  /** Removes `key`; `deleted` says whether it existed. */
  static delete(key: string): KvDeleted {
    const out = new KvDeleted();
    const reply = callCapability("kv.delete", new JSONObject().setString("key", key));
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const result = reply.result.isObject ? changetype<JSONObject>(reply.result).get("deleted") : null;
    if (result === null || !result.isBool) badResult(out, "kv.delete", "deleted");
    else out.deleted = changetype<JSONObject>(reply.result).getBool("deleted");
    return out;
  }

  /** Up to `limit` (1-1000) keys starting with `prefix`, in order. */
  static list(prefix: string = "", limit: i32 = 100): KvKeys {
    const out = new KvKeys();
    const reply = callCapability("kv.list", new JSONObject().setString("prefix", prefix).setInteger("limit", limit));
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const keys: JSONArray | null = reply.result.isObject ? changetype<JSONObject>(reply.result).getArray("keys") : null;
    if (keys === null) {
      badResult(out, "kv.list", "keys");
      return out;
    }
    for (let i = 0; i < keys.length; i++) {
      const key = keys.getString(i);
      if (key === null) {
        badResult(out, "kv.list", "keys");
        out.keys = [];
        return out;
      }
      out.keys.push(key);
    }
    return out;
  }
}
