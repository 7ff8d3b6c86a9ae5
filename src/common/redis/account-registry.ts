import { accountOfKey } from 'src/common/redis/key-slots';
import { RedisClient, scanKeys } from 'src/common/redis/redis-client';
import { runScript } from 'src/common/redis/run-script';

// Removes an account only if nobody registered it since the caller read `version`.
const DEREGISTER_SCRIPT = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`;

/** An account as a registry lists it, with the version to deregister it by. */
export interface Listed {
  accountId: string;
  version: string;
}

/**
 * Which accounts have something a worker must find (open holds, recorded usage), for structures
 * that live in each account's own slot (key-slots.ts) and so cannot share a script with one global
 * index. A sorted set in the global slot: member the account, score a version that every
 * registration bumps.
 *
 * The protocol keeps "an account with work is listed" without a cross-slot script:
 * - a writer first writes the work into the account's slot (atomically there), and then, when
 *   that script says the account had no such work before, registers the account (ZINCRBY);
 * - a reader lists accounts with their versions, looks into each account's slot, and removes an
 *   account it found empty only if its version is unchanged (DEREGISTER_SCRIPT).
 * A registration that lands after the reader's listing changes the version, so the removal is
 * skipped; one that landed before it came after its work was written, so the reader saw the work.
 * The one gap is a process that dies between its write and its registration: `repair` lists
 * every account that has such keys (SCAN over every master) and registers it again.
 */
export class AccountRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {
    redis.defineCommand('gatewayDeregister', { numberOfKeys: 1, lua: DEREGISTER_SCRIPT });
  }

  async register(accountId: string): Promise<void> {
    await this.redis.zincrby(this.key, 1, accountId);
  }

  async listed(): Promise<Listed[]> {
    const flat = await this.redis.zrange(this.key, 0, -1, 'WITHSCORES');
    const listed: Listed[] = [];
    for (let index = 0; index < flat.length; index += 2) {
      listed.push({ accountId: flat[index], version: flat[index + 1] });
    }
    return listed;
  }

  async deregister({ accountId, version }: Listed): Promise<void> {
    await runScript(this.redis, 'gatewayDeregister', this.key, accountId, version);
  }

  /** Registers every account with a key matching `pattern` (an account-slot pattern); returns how many. */
  async repair(pattern: string): Promise<number> {
    const accounts = new Set((await scanKeys(this.redis, pattern)).flatMap((key) => accountOfKey(key) ?? []));
    await Promise.all([...accounts].map((accountId) => this.register(accountId)));
    return accounts.size;
  }
}
