import { RedisClient, scanKeys } from 'src/common/redis/redis-client';

/** SCAN pattern of every account's epoch hash (balance-gate.keys.ts). */
export const EPOCH_PATTERN = 'gw:{*}:epoch';
/** Epochs deleted per round trip. */
const DELETE_BATCH = 500;

/**
 * After Postgres was restored to an earlier point, Redis's balance snapshots are ahead of it: their
 * versions are higher than the restored ones, so a push from Postgres is refused as older, and
 * admission would trust balances that include spending the restore undid. Deleting each account's
 * epoch makes every snapshot (balance and keys' spent) count as "not of this data set": the next
 * admission of each account starts a new epoch and loads it from Postgres, as after a Redis restore
 * (balance-gate.scripts.ts). Open holds and their `reserved` stay: they belong to requests still
 * running, which close them as usual (or the hold sweeper does). Returns how many epochs it ended.
 */
export async function endBalanceEpochs(redis: RedisClient): Promise<number> {
  const keys = await scanKeys(redis, EPOCH_PATTERN);
  for (let start = 0; start < keys.length; start += DELETE_BATCH) {
    // One key per command: on a cluster the accounts' keys are in different slots.
    const pipeline = redis.pipeline();
    keys.slice(start, start + DELETE_BATCH).forEach((key) => pipeline.unlink(key));
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([error]) => error !== null);
    if (failed) {
      throw failed[0]!;
    }
  }
  return keys.length;
}
