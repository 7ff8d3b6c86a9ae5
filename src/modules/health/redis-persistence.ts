/** What the worker's metrics take from Redis's `INFO persistence`. */
export interface RedisPersistence {
  /** The append-only file is on: a killed Redis loses at most the last second of holds and usage. */
  aofEnabled: boolean;
  /** The last AOF write and the last RDB save (when either ran) did not fail. */
  ok: boolean;
}

/** Reads `INFO persistence`'s `key:value` lines; a field Redis does not report counts as healthy or off. */
export function parseRedisPersistence(info: string): RedisPersistence {
  const fields = new Map(
    info
      .split(/\r?\n/)
      .map((line) => line.split(':'))
      .filter((parts) => parts.length === 2)
      .map(([key, value]) => [key.trim(), value.trim()]),
  );
  const failed = (key: string) => fields.has(key) && fields.get(key) !== 'ok';
  return {
    aofEnabled: fields.get('aof_enabled') === '1',
    ok: !failed('aof_last_write_status') && !failed('rdb_last_bgsave_status'),
  };
}

/**
 * Whether `INFO memory` says `maxmemory_policy:noeviction`: under any other policy a full Redis drops
 * keys (balances, holds, usage waiting to be settled) instead of refusing writes.
 */
export function isNoeviction(memoryInfo: string): boolean {
  return /^maxmemory_policy:noeviction\r?$/m.test(memoryInfo);
}
