import { isIP } from 'node:net';

/** proxy-addr's names for address ranges, as Fastify's `trustProxy` accepts them. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * True for a comma-separated list of addresses, CIDR ranges or proxy-addr's named ranges. A prefix
 * of 0 is refused: trusting every address would let any client choose the IP it is counted under.
 */
export function isTrustedProxyList(value: string): boolean {
  const entries = splitList(value);
  return entries.length > 0 && entries.every(isTrustedProxyEntry);
}

export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function isTrustedProxyEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) {
    return true;
  }
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) {
    return false;
  }
  if (prefix === undefined) {
    return true;
  }
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits >= 1 && bits <= (family === 4 ? 32 : 128);
}
