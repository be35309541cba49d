// log.emit: structured lines into the run's log artifact and the audit trail. The host checks
// the event name (1-100 of A-Z a-z 0-9 _ . : -) and caps fields at 8 KiB of JSON.

import { callCapability } from "../capability";
import { JSONObject } from "../json/value";
import { CapabilityStatus } from "./status";

/** `log.emit` at each level. A failed line returns its error; most tools ignore it. */
export class Log {
  /** Emits `event` at `level` (`debug`, `info`, `warn` or `error`) with optional `fields`. */
  static emit(level: string, event: string, fields: JSONObject | null = null): CapabilityStatus {
    const args = new JSONObject().setString("level", level).setString("event", event);
    args.set("fields", fields !== null ? fields : new JSONObject());
    const out = new CapabilityStatus();
    const reply = callCapability("log.emit", args);
    if (!reply.ok) out.takeError(reply);
    return out;
  }

  static debug(event: string, fields: JSONObject | null = null): CapabilityStatus {
    return Log.emit("debug", event, fields);
  }

  static info(event: string, fields: JSONObject | null = null): CapabilityStatus {
    return Log.emit("info", event, fields);
  }

  static warn(event: string, fields: JSONObject | null = null): CapabilityStatus {
    return Log.emit("warn", event, fields);
  }

  static error(event: string, fields: JSONObject | null = null): CapabilityStatus {
    return Log.emit("error", event, fields);
  }
}
