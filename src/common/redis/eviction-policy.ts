import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { mastersOf, RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';

/** `maxmemory_policy` of an `INFO memory` answer; null when Redis does not report it. */
export function parseMaxmemoryPolicy(info: string): string | null {
  return /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? null;
}

/**
 * Holds, balance snapshots and unsettled usage live in Redis: a Redis allowed to evict keys when full
 * would drop some silently (an unsettled usage is money never charged, a dropped hold lets an account
 * overspend). Only `noeviction` makes a full Redis refuse writes instead, which the gateway answers
 * with 503s. Checked once at start on every master (INFO, which managed Redis services allow where
 * CONFIG GET is often renamed away): a warning line and `gateway_redis_noeviction`, never a refusal
 * to start.
 */
@Injectable()
export class EvictionPolicyCheck implements OnApplicationBootstrap {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    // Not awaited: a Redis that is not up yet must not hold back the start.
    void this.check();
  }

  async check(): Promise<void> {
    try {
      const policies = (await Promise.all(mastersOf(this.redis).map((node) => node.info('memory')))).map(
        parseMaxmemoryPolicy,
      );
      const wrong = [...new Set(policies.filter((policy) => policy !== 'noeviction'))];
      metrics.redisNoEviction.set(policies.length > 0 && wrong.length === 0 ? 1 : 0);
      if (wrong.length > 0) {
        this.logger.warn(
          { maxmemoryPolicy: wrong },
          'Redis maxmemory-policy is not noeviction: a full Redis may drop holds and unsettled usage (docs/operations.md)',
        );
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'could not read Redis maxmemory-policy');
    }
  }
}
