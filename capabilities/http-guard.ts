// The destination rules of http.request, as pure functions: which URLs may be requested, which
// origins the manifest and policy allow, which resolved addresses may be reached, which headers.
import { isIP } from 'node:net';
import { HelixError } from '../abi/index.js';
import { classifyIp, formatIp, inRange, parseCidr, parseIp, unmapIp, type IpRange } from './http-address.js';

/** A URL that passed the URL rule, with its origin spelled out. */
export interface Target {
  readonly url: URL;
  readonly scheme: 'http' | 'https';
  /** Lowercase host without a trailing dot; IPv6 literals keep their brackets, as in URLs. */
  readonly host: string;
  /** The name to resolve (no brackets); equal to `host` for names and IPv4. */
  readonly hostname: string;
  readonly port: number;
  /** `scheme://host:port` with the default port filled in: what patterns are matched against. */
  readonly origin: string;
  /** 4 or 6 for an IP literal, 0 for a name. */
  readonly ipLiteral: 0 | 4 | 6;
}

/**
 * Parses a URL and applies the URL rule: http or https only (no file:, data:, gopher: and such
 * that reach other protocols), and no userinfo, which would leak credentials into run records
 * and journals and has been used to disguise the real host (`https://trusted@evil`).
 */
export function parseTarget(text: string): Target {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw urlError(`http.request refused ${JSON.stringify(text)}: it is not an absolute URL`, text);
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'http' && scheme !== 'https') {
    throw urlError(`http.request refused ${url.href}: the scheme ${scheme} is not http or https`, url.href);
  }
  if (url.username !== '' || url.password !== '') {
    throw urlError(
      `http.request refused a URL for ${url.host}: it carries a user name or password (userinfo)`,
      `${url.protocol}//${url.host}${url.pathname}`,
    );
  }
  // WHATWG parsing already lowercased the host and canonicalised IPv4 forms such as 0x7f.1.
  const host = url.hostname.replace(/\.$/, '');
  const hostname = host.startsWith('[') ? host.slice(1, -1) : host;
  const port = url.port === '' ? (scheme === 'https' ? 443 : 80) : Number(url.port);
  const family = isIP(hostname);
  return { url, scheme, host, hostname, port, origin: `${scheme}://${host}:${port}`, ipLiteral: family === 4 || family === 6 ? family : 0 };
}

function urlError(message: string, url: string): HelixError {
  return new HelixError('I-REQ-HTTP-URL', { message, details: { url } });
}

/**
 * Whether an origin pattern (`https://api.example.org:443`, `https://*.example.org:443`) covers a
 * target. A `*.` pattern covers subdomains at any depth but not the domain itself, so allowing a
 * vendor's API hosts never silently allows its apex. IP literals match only exact patterns:
 * `*.0.0.1` must not become a way to spell `127.0.0.1`.
 */
export function patternMatches(pattern: string, target: Target): boolean {
  const m = /^(https?):\/\/(\*\.)?([^:/]+):(\d{1,5})$/i.exec(pattern);
  if (m === null) return false;
  const [, scheme, wildcard, rawHost = '', port] = m;
  if (scheme?.toLowerCase() !== target.scheme || Number(port) !== target.port) return false;
  const host = rawHost.toLowerCase().replace(/\.$/, '');
  if (wildcard === undefined) return host === target.host;
  return target.ipLiteral === 0 && target.host.endsWith(`.${host}`);
}

/**
 * The origin rule: the tool must have declared the origin (so a reviewer of the manifest sees
 * every place it talks to) and the operator's policy must allow it (the operator has the last
 * word). Either list alone is not enough.
 */
export function checkOrigin(target: Target, manifestPatterns: readonly string[], policyPatterns: readonly string[]): void {
  const inManifest = manifestPatterns.some((p) => patternMatches(p, target));
  const inPolicy = policyPatterns.some((p) => patternMatches(p, target));
  if (inManifest && inPolicy) return;
  const missing = [...(inManifest ? [] : ["the manifest's capabilities.network"]), ...(inPolicy ? [] : ["the policy's network.allow"])];
  const literalV6 = target.ipLiteral === 6 ? ' (IPv6 literals cannot be listed; use a host name)' : '';
  throw new HelixError('A-AUTH-HTTP-ORIGIN', {
    message: `http.request refused ${target.url.href}: origin ${target.origin} is not in ${missing.join(' nor ')}${literalV6}`,
    details: { url: target.url.href, origin: target.origin, in_manifest: inManifest, in_policy: inPolicy },
    hint: `Add ${target.origin} to ${missing.join(' and ')} if the tool should reach it.`,
  });
}

/** The compiled `network.allowPrivate` list: host names, `*.domain` suffixes and IP ranges. */
export interface PrivateAllowList {
  readonly hosts: readonly string[];
  readonly domains: readonly string[];
  readonly ranges: readonly IpRange[];
}

/** Compiles `network.allowPrivate`; an entry that is neither a host name, an IP nor a CIDR is a policy error. */
export function compileAllowPrivate(entries: readonly string[]): PrivateAllowList {
  const hosts: string[] = [];
  const domains: string[] = [];
  const ranges: IpRange[] = [];
  const violations: string[] = [];
  entries.forEach((raw, i) => {
    const entry = raw.trim().toLowerCase().replace(/\.$/, '');
    const cidr = parseCidr(entry);
    if (cidr !== undefined) ranges.push(cidr);
    else if (/^\*\.[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(entry)) domains.push(entry.slice(1));
    else if (/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(entry) && !/^[\d.]+$/.test(entry)) hosts.push(entry);
    else violations.push(`network.allowPrivate[${i}]: ${JSON.stringify(raw)} is not a host name, *.domain, IP address or CIDR range`);
  });
  if (violations.length > 0) {
    throw new HelixError('P-PRECOND-POLICY-INVALID', {
      message: `The policy's network.allowPrivate is invalid: ${violations.join('; ')}`,
      details: { violations },
    });
  }
  return { hosts, domains, ranges };
}

/**
 * The address rule, applied to every address the host resolved to (not just the first): a name
 * whose records mix a public and a private address would otherwise let an attacker pick which
 * one the connection uses. A host named in allowPrivate is trusted whatever it resolves to; else
 * each non-public address must fall in an allowed IP or range.
 */
export function checkAddresses(target: Target, addresses: readonly string[], allow: PrivateAllowList): void {
  const hostAllowed = allow.hosts.includes(target.hostname) || allow.domains.some((d) => target.hostname.endsWith(d));
  if (hostAllowed) return;
  for (const text of addresses) {
    const ip = parseIp(text);
    if (ip === undefined) throw privateError(target, text, text, 'not an IP address', 'invalid');
    const special = classifyIp(ip);
    if (special === undefined) continue;
    const plain = unmapIp(ip);
    if (allow.ranges.some((r) => inRange(plain, r) || inRange(ip, r))) continue;
    const shown = special.embedded === undefined ? formatIp(ip) : `${formatIp(ip)} (IPv4 ${special.embedded})`;
    // Only an IPv4-mapped address is allowed by its IPv4 form; NAT64 and 6to4 need their own entry.
    const entry = plain.family === 4 ? formatIp(plain) : formatIp(ip);
    throw privateError(target, shown, entry, `${special.kind} (${special.range})`, special.kind);
  }
}

function privateError(target: Target, address: string, entry: string, why: string, kind: string): HelixError {
  const resolved = target.ipLiteral === 0 ? `${target.hostname} resolves to ${address}, which is` : `${address} is`;
  return new HelixError('A-AUTH-HTTP-PRIVATE-ADDRESS', {
    message: `http.request refused ${target.url.href}: ${resolved} ${why}; non-public addresses are refused unless listed in the policy's network.allowPrivate`,
    details: { url: target.url.href, host: target.hostname, address: entry, kind },
    hint: `If the tool really must reach it, add ${target.ipLiteral === 0 ? `"${target.hostname}" or ` : ''}"${entry}" to the policy's network.allowPrivate.`,
  });
}

/** Headers the host owns: it sets them from the URL and body, or they belong to its connection. */
const HOST_OWNED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'http2-settings',
]);
/** Bounds on the guest's headers, far above what real APIs need. */
export const HEADER_LIMITS = { count: 64, nameChars: 256, valueChars: 8192, totalChars: 32_768 } as const;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space, tab and obs-text: no CR or LF (header injection, request splitting) or NUL.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Checks the guest's headers and returns them with lowercase names. Host, Content-Length,
 * Transfer-Encoding and hop-by-hop headers are refused: the host derives them from the checked
 * URL and body, and letting the guest set them opens virtual-host confusion and request smuggling.
 */
export function checkHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const entries = Object.entries(headers);
  const fail = (message: string, name?: string): never => {
    throw new HelixError('I-REQ-HTTP-HEADER', {
      message: `http.request refused the request headers: ${message}`,
      details: name === undefined ? {} : { header: name },
    });
  };
  if (entries.length > HEADER_LIMITS.count) fail(`${entries.length} headers, more than ${HEADER_LIMITS.count}`);
  const out: Record<string, string> = {};
  let total = 0;
  for (const [name, value] of entries) {
    const shown = JSON.stringify(name.slice(0, 64));
    if (name.length === 0 || name.length > HEADER_LIMITS.nameChars || !TOKEN.test(name))
      fail(`header name ${shown} is not an HTTP token of at most ${HEADER_LIMITS.nameChars} characters`, name.slice(0, 64));
    const lower = name.toLowerCase();
    if (HOST_OWNED_HEADERS.has(lower)) fail(`header ${shown} is set by the host, not the tool`, lower);
    if (Object.hasOwn(out, lower)) fail(`header ${shown} is given twice (names are case-insensitive)`, lower);
    if (value.length > HEADER_LIMITS.valueChars) fail(`header ${shown} is longer than ${HEADER_LIMITS.valueChars} characters`, lower);
    if (!FIELD_VALUE.test(value)) fail(`header ${shown} has a CR, LF, NUL or other control or non-Latin-1 character in its value`, lower);
    total += name.length + value.length;
    out[lower] = value;
  }
  if (total > HEADER_LIMITS.totalChars) fail(`headers total ${total} characters, more than ${HEADER_LIMITS.totalChars}`);
  return out;
}
