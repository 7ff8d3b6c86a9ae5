import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import { REQUEST_WINDOWS } from 'src/common/redis/window-scripts';

// Fixed windows that start with their first request (REQUEST_WINDOWS): a request is counted in all
// its windows or, when one is full, in none. KEYS: windows; ARGV[1]: ttl ms; ARGV[1 + i]: limit of
// window i; ARGV[1 + #KEYS + i]: the ttl of window i, when it has its own.
// Returns {refused window index or 0, hits of that window (or of the first), its ms left}.
const INCREMENT_SCRIPT = `${REQUEST_WINDOWS}
local limits, ttls = {}, {}
for i = 1, #KEYS do
  limits[i] = ARGV[i + 1]
  ttls[i] = ARGV[1 + #KEYS + i] or ARGV[1]
end
local refused, hits, pttl = requestsRefusedBy(KEYS, limits)
if refused then return {refused, hits, pttl} end
local first, firstTtl = countRequests(KEYS, ttls)
return {0, first, firstTtl}`;

export interface Window {
  key: string;
  limit: number;
  /** This window's length, when it differs from the one given for all. */
  ttl?: number;
}

export interface WindowsRecord {
  /** Index into the windows of the one that refused, or -1 when the request was counted in all. */
  refusedBy: number;
  /** Hits of the refusing window, or of the first window when admitted. */
  hits: number;
  /** Milliseconds until that window resets. */
  resetMs: number;
}

/** @nestjs/throttler's storage on Redis: one atomic script per check, shared by every API process. */
@Injectable()
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {
    this.redis.defineCommand('gatewayThrottle', { lua: INCREMENT_SCRIPT });
  }

  /** Checks several windows at once and counts the request in all of them, or in none. */
  async incrementWindows(windows: Window[], ttl: number): Promise<WindowsRecord> {
    const keys = windows.map((window) => window.key);
    const limits = windows.map((window) => String(window.limit));
    const ttls = windows.some((window) => window.ttl) ? windows.map((window) => String(window.ttl ?? ttl)) : [];
    const [refused, hits, pttl] = await runScript<[number, number, number]>(
      this.redis,
      'gatewayThrottle',
      keys.length,
      ...keys,
      String(ttl),
      ...limits,
      ...ttls,
    );
    return { refusedBy: refused - 1, hits, resetMs: pttl > 0 ? pttl : ttl };
  }

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    const record = await this.incrementWindows([{ key, limit }], ttl);
    const seconds = Math.ceil(record.resetMs / 1000);
    const blocked = record.refusedBy >= 0;
    return {
      totalHits: record.hits,
      timeToExpire: seconds,
      isBlocked: blocked,
      timeToBlockExpire: blocked ? seconds : 0,
    };
  }
}
