import { BlockList, isIP } from 'node:net';

/**
 * Addresses an image URL must not reach: a client could otherwise make the gateway read its own network
 * (cloud metadata, admin ports, databases). IPv4-mapped IPv6 (::ffff:a.b.c.d) is checked as the IPv4
 * address it carries, so it cannot smuggle 127.0.0.1 past the IPv4 rules.
 */
const PRIVATE_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const PRIVATE_V6: [string, number][] = [
  ['::', 96], // unspecified, loopback (::1) and IPv4-compatible (::a.b.c.d)
  ['64:ff9b::', 96], // NAT64: carries an IPv4 address the gateway cannot check
  ['100::', 64], // discard
  ['2001::', 32], // Teredo: carries an IPv4 address
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: carries an IPv4 address
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some)
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
PRIVATE_V4.forEach(([network, prefix]) => blocked.addSubnet(network, prefix, 'ipv4'));
PRIVATE_V6.forEach(([network, prefix]) => blocked.addSubnet(network, prefix, 'ipv6'));

const MAPPED_V4 = /^::ffff:(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i;
const MAPPED_V4_HEX = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address an IPv4-mapped (or -translated) IPv6 address carries, else the address itself. */
function unmapped(address: string): string {
  const dotted = MAPPED_V4.exec(address);
  if (dotted) {
    return dotted[1];
  }
  const hex = MAPPED_V4_HEX.exec(address);
  if (hex) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return address;
}

/** Whether `address` (an IP literal) is private, loopback, link-local, unique-local, CGNAT, multicast or unspecified. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const plain = unmapped(bare.replace(/%.*$/, ''));
  const family = isIP(plain);
  if (family === 0) {
    // Not an address at all: never treat it as safe.
    return true;
  }
  return blocked.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}
