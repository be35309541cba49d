// secrets.get: a secret by name. The manifest must allow the scoped entry
// `secrets.get.<name>` (the bare `secrets.get` grants nothing) and the policy must grant it.

import { callCapability } from "../capability";
import { JSONObject } from "../json/value";
import { badResult, CapabilityStatus } from "./status";

/** The result of `Secrets.get`. Never log `value` or put it in an output. */
export class SecretValue extends CapabilityStatus {
  value: string = "";
}

/** `secrets.get`. */
export class Secrets {
  /**
   * The secret `name` (lowercase, e.g. `db_password`). Without `secrets.get.<name>` in the
   * allowlist the host answers `A-AUTH-FORBIDDEN`; a granted but unconfigured secret is
   * `P-PRECOND-SECRET-MISSING`.
   */
  static get(name: string): SecretValue {
    const out = new SecretValue();
    const reply = callCapability("secrets.get", new JSONObject().setString("name", name));
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const value = reply.result.isObject ? changetype<JSONObject>(reply.result).getString("value") : null;
    if (value === null) badResult(out, "secrets.get", "value");
    else out.value = value;
    return out;
  }
}
