import { accountSlot, GLOBAL_SLOT } from 'src/common/redis/key-slots';

/**
 * An account's recorded usage, in its own slot (key-slots.ts) beside its holds, so that a hold and
 * the usage recorded for it close in one script:
 * - usage `gw:{id}:usage` {requestId: payload JSON}: recorded and not settled yet;
 * - due `gw:{id}:usage:due` requestId scored by when it may be claimed (Redis's clock);
 * - attempts `gw:{id}:usage:attempts` {requestId: failed settlement attempts} (for the backoff).
 */
export interface UsageKeys {
  usage: string;
  due: string;
  attempts: string;
}

export function usageKeys(accountId: string): UsageKeys {
  const slot = accountSlot(accountId);
  return { usage: `${slot}:usage`, due: `${slot}:usage:due`, attempts: `${slot}:usage:attempts` };
}

/** The accounts that may have recorded usage (an AccountRegistry): where workers claim from. */
export const USAGE_ACCOUNTS = `${GLOBAL_SLOT}:usage:accounts`;
/** SCAN pattern of every account's due index, for the registry's repair. */
export const DUE_PATTERN = 'gw:{*}:usage:due';
