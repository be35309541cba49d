// http.request: outbound HTTP within the origins the manifest lists in `capabilities.network`
// and the policy allows. Bodies travel as utf8 text or base64; sizes and time are bounded.

import { Base64 } from "../base64";
import { callCapability } from "../capability";
import { JSONObject } from "../json/value";
import { badResult, CapabilityStatus } from "./status";

/** The result of `Http.request`: the response, or the host's error (`A-AUTH-HTTP-ORIGIN`, ...). */
export class HttpResponse extends CapabilityStatus {
  /** HTTP status code, e.g. 200; 0 when the call failed. */
  status: i32 = 0;
  /** Response headers: lowercase names, repeated headers joined with ", ". */
  headers: JSONObject = new JSONObject();
  /** The body: text when `bodyEncoding` is `utf8`, base64 when it is `base64`. */
  body: string = "";
  bodyEncoding: string = "utf8";
  /** The URL of the final response, after redirects. */
  url: string = "";

  /** The header `name` (any case), or null when absent. */
  header(name: string): string | null {
    const direct = this.headers.getString(name);
    if (direct !== null) return direct;
    const wanted = asciiLower(name);
    for (let i = 0; i < this.headers.size; i++) {
      if (asciiLower(this.headers.keyAt(i)) != wanted) continue;
      const value = this.headers.valueAt(i);
      if (value.isString) return this.headers.getString(this.headers.keyAt(i));
    }
    return null;
  }

  /** The body's bytes (decoding base64, or encoding utf8 text), or null when base64 is malformed. */
  bodyBytes(): Uint8Array | null {
    if (this.bodyEncoding == "base64") return Base64.decode(this.body);
    return Uint8Array.wrap(String.UTF8.encode(this.body));
  }

  /** True for a 2xx status. */
  get success(): bool {
    return this.status >= 200 && this.status < 300;
  }
}

/** `http.request`. */
export class Http {
  /**
   * Sends one request. `headers` maps names to string values; `body` is text, or base64 when
   * `bodyEncoding` is `base64`; `maxResponseBytes` 0 leaves the host's limit. A 4xx or 5xx
   * status is a response (`ok` true), not an error; refusals and network failures are errors.
   */
  static request(
    method: string,
    url: string,
    headers: JSONObject | null = null,
    body: string | null = null,
    bodyEncoding: string = "utf8",
    maxResponseBytes: i64 = 0,
  ): HttpResponse {
    const args = new JSONObject().setString("method", method).setString("url", url);
    if (headers !== null) args.set("headers", headers);
    if (body !== null) args.setString("body", body).setString("body_encoding", bodyEncoding);
    if (maxResponseBytes > 0) args.setInteger("max_response_bytes", maxResponseBytes);
    const out = new HttpResponse();
    const reply = callCapability("http.request", args);
    if (!reply.ok) {
      out.takeError(reply);
      return out;
    }
    const result = reply.result.isObject ? changetype<JSONObject>(reply.result) : new JSONObject();
    const status = result.getInteger("status", -1);
    const text = result.getString("body");
    if (status < 0) {
      badResult(out, "http.request", "status");
      return out;
    }
    if (text === null) {
      badResult(out, "http.request", "body");
      return out;
    }
    out.status = <i32>status;
    out.body = text;
    const encoding = result.getString("body_encoding");
    if (encoding !== null) out.bodyEncoding = encoding;
    const finalUrl = result.getString("url");
    out.url = finalUrl !== null ? finalUrl : url;
    const responseHeaders = result.getObject("headers");
    if (responseHeaders !== null) out.headers = responseHeaders;
    return out;
  }

  /** `GET url`. */
  static get(url: string, headers: JSONObject | null = null): HttpResponse {
    return Http.request("GET", url, headers);
  }
}

function asciiLower(text: string): string {
  let lower = text;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x41 && unit <= 0x5a) {
      // Copy only when needed: most header names are already lowercase.
      const units = new Array<i32>(text.length);
      for (let j = 0; j < text.length; j++) {
        const c = text.charCodeAt(j);
        units[j] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
      }
      lower = String.fromCharCodes(units);
      break;
    }
  }
  return lower;
}
