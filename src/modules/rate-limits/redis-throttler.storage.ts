import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import Redis from 'ioredis';
import { REDIS } from 'src/common/redis/redis.tokens';

// A fixed window that starts with the first request. A refused request is not counted, so
// "used" in the 429 message is exactly what was served.
const INCREMENT_SCRIPT = `
local hits = tonumber(redis.call('GET', KEYS[1]) or '0')
if hits >= tonumber(ARGV[2]) then
  return {hits, redis.call('PTTL', KEYS[1]), 1}
end
hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {hits, redis.call('PTTL', KEYS[1]), 0}`;

export interface WindowRecord extends ThrottlerStorageRecord {
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/** @nestjs/throttler's storage on Redis: one atomic script per check, shared by every API process. */
@Injectable()
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(@Inject(REDIS) private readonly redis: Redis) {
    this.redis.defineCommand('gatewayThrottle', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  }

  async increment(key: string, ttl: number, limit: number): Promise<WindowRecord> {
    const run = (this.redis as unknown as { gatewayThrottle: (...args: string[]) => Promise<[number, number, number]> })
      .gatewayThrottle;
    const [hits, pttl, blocked] = await run.call(this.redis, key, String(ttl), String(limit));
    const resetMs = pttl > 0 ? pttl : ttl;
    const seconds = Math.ceil(resetMs / 1000);
    return {
      totalHits: hits,
      timeToExpire: seconds,
      isBlocked: blocked === 1,
      timeToBlockExpire: blocked ? seconds : 0,
      resetMs,
    };
  }
}
