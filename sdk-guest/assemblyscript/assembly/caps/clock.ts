// clock.now_unix: the host's time (journaled, so verifying a run sees the same value).
// Guests have no clock of their own: Date.now would need an import helix/v1 refuses.

import { callCapability } from "../capability";
import { JSONObject } from "../json/value";
import { badResult, CapabilityStatus } from "./status";

/** The result of `Clock.now()`. */
export class ClockTime extends CapabilityStatus {
  /** Milliseconds since the Unix epoch. */
  unixMs: i64 = 0;
  /** Whole seconds since the Unix epoch. */
  unixS: i64 = 0;
}

/** `clock.now_unix`. */
export class Clock {
  /** The current time, or the host's error (for example `A-AUTH-FORBIDDEN`). */
  static now(): ClockTime {
    const out = new ClockTime();
    const reply = callCapability("clock.now_unix", new JSONObject());
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const result = changetype<JSONObject>(reply.result);
    const ms = reply.result.isObject ? result.getInteger("unix_ms", -1) : -1;
    if (ms < 0) {
      badResult(out, "clock.now_unix", "unix_ms");
      return out;
    }
    out.unixMs = ms;
    out.unixS = result.getInteger("unix_s", ms / 1000);
    return out;
  }

  /** Milliseconds since the Unix epoch, or -1 when the call failed (`Clock.now()` says why). */
  static nowUnixMs(): i64 {
    const time = Clock.now();
    return time.ok ? time.unixMs : -1;
  }
}
