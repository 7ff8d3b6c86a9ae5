// Every Redis key of the gateway starts with one of these slot prefixes. On a Redis Cluster a key's
// slot is the hash of its tag, the part between the first `{` and the next `}`, so keys with one tag
// share a slot and a script or MULTI may touch all of them; on one Redis the tags are only names.
//
// - `gw:{<accountId>}:…` everything one account's admission and billing touch: balance snapshot,
//   holds, epoch, key spend, recorded usage, requests- and tokens-per-minute windows
//   (balance-gate.keys.ts, usage-queue.keys.ts, rate-limit.keys.ts). Accounts spread over the
//   cluster; one account's request is one slot.
// - `gw:{gw}:…` the few structures that span accounts (which accounts have open holds or recorded
//   usage). No script touches them together with an account's keys: see the registries'
//   protocol in account-registry.ts.
// - `gw:{<domain>}:…` small, low-traffic families whose scripts span several keys of no single
//   account (sign-in throttles: `{auth}`, mail throttles: `{mail}`, redemption throttles: `{redeem}`,
//   channel breakers: `{breaker}`).
// BullMQ's keys carry the tag `{gateway}` (queue-connection.ts).

/** The prefix of every key of one account's slot. */
export const accountSlot = (accountId: string): string => `gw:{${accountId}}`;

/**
 * The account whose slot `key` is in (the inverse of accountSlot); null for the global slot. Meant
 * for account keys (the registries' repair matches only those): a domain key gives its domain.
 */
export function accountOfKey(key: string): string | null {
  const match = /^gw:\{([^}]+)\}:/.exec(key);
  return match && match[1] !== GLOBAL_TAG ? match[1] : null;
}

const GLOBAL_TAG = 'gw';
/** The prefix of the keys that span accounts. */
export const GLOBAL_SLOT = `gw:{${GLOBAL_TAG}}`;

/** The prefix of a small domain's keys, all in one slot. */
export const domainSlot = (domain: 'auth' | 'mail' | 'redeem' | 'breaker'): string => `gw:{${domain}}`;
