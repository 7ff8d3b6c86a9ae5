import { accountOfKey, accountSlot, domainSlot, GLOBAL_SLOT } from 'src/common/redis/key-slots';
import { usageKeys } from 'src/modules/billing/usage-queue.keys';
import { balanceKeys, HOLD_ACCOUNTS } from 'src/modules/ledger/balance-gate.keys';
import { requestWindowKey, tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';

const ACCOUNT = '7b0e7c44-58a4-4d0c-9a3e-1f3c2d9b6a01';
/** A Redis Cluster hashes a key's tag: what is between its first `{` and the next `}`. */
const tagOf = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];

describe('Redis key slots', () => {
  it("should tag every key of an account's admission and billing with the account", () => {
    const keys = [
      ...Object.values(balanceKeys(ACCOUNT)),
      ...Object.values(usageKeys(ACCOUNT)),
      requestWindowKey(ACCOUNT, 'gpt-4o', 'user-1'),
      tokenWindowKey(ACCOUNT, 'gpt-4o', 29_000_000, 'user-1'),
      // An end user or a model id with braces of its own must not move the key to another slot.
      requestWindowKey(ACCOUNT, 'model-{x}', '{user}'),
    ];

    expect(new Set(keys.map(tagOf))).toEqual(new Set([ACCOUNT]));
    expect(keys.map(accountOfKey)).toEqual(keys.map(() => ACCOUNT));
  });

  it('should keep the structures that span accounts out of every account', () => {
    expect(HOLD_ACCOUNTS.startsWith(GLOBAL_SLOT)).toBe(true);
    expect(accountOfKey(HOLD_ACCOUNTS)).toBeNull();
    expect(tagOf(`${domainSlot('auth')}:ip:127.0.0.1`)).toBe('auth');
    expect(accountSlot(ACCOUNT)).toBe(`gw:{${ACCOUNT}}`);
  });
});
