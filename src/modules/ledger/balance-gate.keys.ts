import { accountSlot, GLOBAL_SLOT } from 'src/common/redis/key-slots';

/**
 * An account's admission keys, all in its own slot (key-slots.ts):
 * - snapshot `gw:{id}:bal` {balance, version, epoch, reserved}: the balance as Postgres had it;
 * - holds `gw:{id}:holds` {requestId: 'amount:keyId'}: open holds;
 * - opened `gw:{id}:holds:opened` requestId scored by when it was opened (Redis's clock);
 * - epoch `gw:{id}:epoch` {id, runId}: the Redis data set the snapshots were loaded into;
 * - keySpend `gw:{id}:keyspend` {'<keyId>:spent', '<keyId>:reserved', '<keyId>:epoch'}: the
 *   account's keys' spend, in one hash so that closing a hold reaches its key's share through a key
 *   the script was given (a hold's value names its key; the caller need not know it).
 */
export interface BalanceKeys {
  snapshot: string;
  holds: string;
  opened: string;
  epoch: string;
  keySpend: string;
}

export function balanceKeys(accountId: string): BalanceKeys {
  const slot = accountSlot(accountId);
  return {
    snapshot: `${slot}:bal`,
    holds: `${slot}:holds`,
    opened: `${slot}:holds:opened`,
    epoch: `${slot}:epoch`,
    keySpend: `${slot}:keyspend`,
  };
}

/**
 * The keys of an account's holds, in the order the scripts take them (ADMIT_SCRIPT, and billing's
 * scripts that close holds with CLOSE_HOLDS and SYNC_SNAPSHOT).
 */
export function holdKeys(accountId: string): [string, string, string, string, string] {
  const { snapshot, holds, opened, epoch, keySpend } = balanceKeys(accountId);
  return [snapshot, holds, opened, epoch, keySpend];
}

/** A field of an account's keySpend hash. */
export const keySpendField = (keyId: string, field: 'spent' | 'reserved' | 'epoch') => `${keyId}:${field}`;

/** The accounts that may have open holds (an AccountRegistry), for the hold sweeper. */
export const HOLD_ACCOUNTS = `${GLOBAL_SLOT}:holds:accounts`;
/** SCAN pattern of every account's opened-holds index, for the registry's repair. */
export const OPENED_PATTERN = 'gw:{*}:holds:opened';
