import { isIPv6 } from 'node:net';

/**
 * The address a client is throttled under. An IPv6 client usually holds a whole /64 and can pick any
 * address in it, so IPv6 addresses count by their /64; IPv4-mapped ones count as the IPv4 address.
 */
export function throttleAddress(ip: string): string {
  if (!ip.includes(':')) {
    // IPv4 (or no address at all), as most clients are: asked on every /v1 request, so no regex.
    return ip;
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) {
    return mapped[1];
  }
  if (!isIPv6(ip)) {
    return ip;
  }
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandIPv6(ip: string): string[] {
  const [head, tail] = ip.split('%')[0].split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((group) => parseInt(group, 16).toString(16));
}
