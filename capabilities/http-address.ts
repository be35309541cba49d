// IP address arithmetic for http.request: parse v4/v6 text, match CIDR ranges and classify an
// address as public or special-purpose (private, loopback, link-local, ...), with no I/O.
import { isIPv4, isIPv6 } from 'node:net';

/** An IP address as a number: 32 bits for IPv4, 128 for IPv6. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

/** A CIDR range such as `10.0.0.0/8` or `fc00::/7`. */
export interface IpRange {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly prefix: number;
  /** The range as written in canonical form, for messages. */
  readonly text: string;
}

/** Why an address is not public: the named range it falls in. */
export interface SpecialAddress {
  /** Short kind, e.g. `loopback`, `private`, `link-local`. */
  readonly kind: string;
  /** The range it falls in, e.g. `127.0.0.0/8` (for embedded IPv4, the IPv4 range). */
  readonly range: string;
  /** For IPv4-mapped, NAT64 and 6to4 addresses: the embedded IPv4 address. */
  readonly embedded?: string;
}

const bits = (family: 4 | 6): number => (family === 4 ? 32 : 128);

/** Parses an IPv4 or IPv6 literal (an IPv6 zone such as `%eth0` is ignored); undefined if not one. */
export function parseIp(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv4(bare)) return { family: 4, value: parseV4(bare) };
  const unzoned = bare.split('%')[0] ?? '';
  if (isIPv6(unzoned)) return { family: 6, value: parseV6(unzoned) };
  return undefined;
}

function parseV4(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseV6(text: string): bigint {
  // A trailing dotted quad (::ffff:1.2.3.4) stands for the last two 16-bit groups.
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  let body = text;
  if (last.includes('.')) {
    const v4 = parseV4(last);
    body = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const groupsOf = (s: string): bigint[] => (s === '' ? [] : s.split(':').map((g) => BigInt(`0x${g}`)));
  const [head = '', rest] = body.split('::');
  const left = groupsOf(head);
  const right = rest === undefined ? [] : groupsOf(rest);
  const zeros = Array<bigint>(8 - left.length - right.length).fill(0n);
  return [...left, ...zeros, ...right].reduce((acc, g) => (acc << 16n) | g, 0n);
}

/** Formats an address canonically (IPv6 in RFC 5952 style, lowercase, longest zero run as `::`). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > best.len && j - i > 1) best = { start: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start === -1) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.len).join(':')}`;
}

/** Parses `address/prefix` (or a bare address, as a single-address range); undefined if malformed. */
export function parseCidr(text: string): IpRange | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (ip === undefined) return undefined;
  const width = bits(ip.family);
  const prefixText = slash === -1 ? String(width) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > width) return undefined;
  const base = ip.value & mask(ip.family, prefix);
  return { family: ip.family, base, prefix, text: `${formatIp({ family: ip.family, value: base })}/${prefix}` };
}

function mask(family: 4 | 6, prefix: number): bigint {
  const width = BigInt(bits(family));
  const all = (1n << width) - 1n;
  return (all >> BigInt(prefix)) ^ all;
}

/** Whether `ip` lies in `range` (families must agree). */
export function inRange(ip: IpAddress, range: IpRange): boolean {
  return ip.family === range.family && (ip.value & mask(ip.family, range.prefix)) === range.base;
}

/**
 * The IPv4 address an IPv6 address stands for, if it is IPv4-mapped (`::ffff:a.b.c.d`): a socket
 * to it reaches the IPv4 host, so allowlists and classification treat it as that address.
 */
export function unmapIp(ip: IpAddress): IpAddress {
  if (ip.family === 6 && ip.value >> 32n === 0xffffn) return { family: 4, value: ip.value & 0xffffffffn };
  return ip;
}

const range = (text: string): IpRange => {
  const parsed = parseCidr(text);
  if (parsed === undefined) throw new Error(`bad built-in range ${text}`);
  return parsed;
};

// Special-purpose ranges (IANA registries, RFC 6890 and successors). Anything here can point a
// request at the host itself, the operator's network or cloud metadata (169.254.169.254): the
// classic SSRF targets. The list is deliberately wide; allowPrivate opens exceptions.
const SPECIAL_V4: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
];
const SPECIAL_V6: ReadonlyArray<readonly [string, string]> = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignment (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];
const V4_TABLE = SPECIAL_V4.map(([text, kind]) => ({ range: range(text), kind }));
const V6_TABLE = SPECIAL_V6.map(([text, kind]) => ({ range: range(text), kind }));
const GLOBAL_UNICAST_V6 = range('2000::/3');
const NAT64 = range('64:ff9b::/96');
const SIX_TO_FOUR = range('2002::/16');

/**
 * Classifies an address: undefined when it is public (globally routable unicast), else the
 * special range it falls in. IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are
 * judged by that address, since that is where the packets end up. IPv6 outside 2000::/3 is
 * refused as reserved: fail closed on space that has no public use today.
 */
export function classifyIp(ip: IpAddress): SpecialAddress | undefined {
  if (ip.family === 4) {
    const hit = V4_TABLE.find((r) => inRange(ip, r.range));
    return hit === undefined ? undefined : { kind: hit.kind, range: hit.range.text };
  }
  const embedded = embeddedV4(ip);
  if (embedded !== undefined) {
    const inner = classifyIp(embedded);
    return inner === undefined ? undefined : { ...inner, embedded: formatIp(embedded) };
  }
  const hit = V6_TABLE.find((r) => inRange(ip, r.range));
  if (hit !== undefined) return { kind: hit.kind, range: hit.range.text };
  if (!inRange(ip, GLOBAL_UNICAST_V6)) return { kind: 'reserved', range: 'outside 2000::/3' };
  return undefined;
}

function embeddedV4(ip: IpAddress): IpAddress | undefined {
  const mapped = unmapIp(ip);
  if (mapped.family === 4) return mapped;
  if (inRange(ip, NAT64)) return { family: 4, value: ip.value & 0xffffffffn };
  if (inRange(ip, SIX_TO_FOUR)) return { family: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return undefined;
}
