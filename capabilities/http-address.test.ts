// Tables for the address arithmetic behind http.request's private-address rule.
import { describe, expect, it } from 'vitest';
import { classifyIp, formatIp, inRange, parseCidr, parseIp, unmapIp } from './http-address.js';

const ip = (text: string) => {
  const parsed = parseIp(text);
  if (parsed === undefined) throw new Error(`test address ${text} does not parse`);
  return parsed;
};

describe('parseIp and formatIp', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::', '::'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['fe80::', 'fe80::'],
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1'],
  ])('parseIp reads %s and formatIp writes it as %s', (input, canonical) => {
    expect(formatIp(ip(input))).toBe(canonical);
  });

  it.each(['example.org', '1.2.3', '1.2.3.256', '01.2.3.4', '::g', '1:2:3:4:5:6:7:8:9', '', '127.0.0.1/8'])(
    'parseIp refuses %j',
    (input) => {
      expect(parseIp(input)).toBeUndefined();
    },
  );

  it('unmapIp turns an IPv4-mapped IPv6 address into its IPv4 address and leaves others alone', () => {
    expect(formatIp(unmapIp(ip('::ffff:10.1.2.3')))).toBe('10.1.2.3');
    expect(formatIp(unmapIp(ip('::1')))).toBe('::1');
    expect(formatIp(unmapIp(ip('8.8.8.8')))).toBe('8.8.8.8');
  });
});

describe('parseCidr and inRange', () => {
  it.each([
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['127.0.0.1', '127.0.0.1/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['fc00::/7', 'fc00::/7'],
    ['fd00::1/8', 'fd00::/8'],
    ['::1', '::1/128'],
  ])('parseCidr reads %s as %s', (input, canonical) => {
    expect(parseCidr(input)?.text).toBe(canonical);
  });

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/x', '10.0.0.0/-1', 'example.org/8', '10.0.0/8'])(
    'parseCidr refuses %j',
    (input) => {
      expect(parseCidr(input)).toBeUndefined();
    },
  );

  it.each([
    ['10.255.255.255', '10.0.0.0/8', true],
    ['11.0.0.0', '10.0.0.0/8', false],
    ['100.127.0.1', '100.64.0.0/10', true],
    ['100.128.0.1', '100.64.0.0/10', false],
    ['fdff::1', 'fc00::/7', true],
    ['fe00::1', 'fc00::/7', false],
    ['10.0.0.1', '::/0', false],
    ['::ffff:10.0.0.1', '10.0.0.0/8', false],
  ])('inRange says %s in %s is %s (families never mix)', (address, cidr, expected) => {
    const r = parseCidr(cidr);
    expect(r).toBeDefined();
    if (r !== undefined) expect(inRange(ip(address), r)).toBe(expected);
  });
});

describe('classifyIp', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '100.63.255.255',
    '100.128.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '192.169.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('classifyIp finds %s public', (address) => {
    expect(classifyIp(ip(address))).toBeUndefined();
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2001::1', 'IETF protocol assignment (Teredo, benchmarking, ORCHID)'],
    ['2001:db8::1', 'documentation'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%lo0', 'link-local'],
    ['fec0::1', 'site-local (deprecated)'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'reserved'],
    ['100::1', 'discard-only'],
  ])('classifyIp finds %s %s', (address, kind) => {
    expect(classifyIp(ip(address))?.kind).toBe(kind);
  });

  it('classifyIp names the embedded IPv4 address and its range for IPv4-mapped addresses', () => {
    expect(classifyIp(ip('::ffff:127.0.0.1'))).toEqual({ kind: 'loopback', range: '127.0.0.0/8', embedded: '127.0.0.1' });
  });
});
