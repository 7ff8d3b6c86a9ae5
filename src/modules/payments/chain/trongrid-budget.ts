import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { CallBudget } from 'src/modules/payments/chain/trongrid-client';

/** Milliseconds since the epoch; tests give their own to pass minutes without waiting for them. */
export const TRONGRID_CLOCK = Symbol('TRONGRID_CLOCK');

const MINUTE_MS = 60_000;
const KEY = 'chain-watch:trongrid-calls';

// A sliding minute of calls, one sorted-set member per call scored by its time. KEYS[1]: the set;
// ARGV: now ms, the minute's limit, a member unique to this call. Returns 1 when the call may go.
const TAKE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - ${MINUTE_MS})
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ${MINUTE_MS})
return 1`;

/**
 * TRONGRID_MAX_CALLS_PER_MINUTE, shared by every worker through Redis: no 60 s ever holds more calls.
 * Each run also takes no more than its share (the minute's budget times the runs in a minute), so the
 * budget is spread over the minute's runs instead of spent by its first.
 */
@Injectable()
export class TronGridBudget {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(TRONGRID_CLOCK) private readonly clock: () => number = Date.now,
  ) {
    this.redis.defineCommand('gatewayTronGridCall', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }

  /** Calls one run may make at most. */
  perRun(): number {
    const chains = this.config.payments.chains;
    const perMinute = chains.tron?.maxCallsPerMinute ?? 0;
    return Math.max(1, Math.min(perMinute, Math.floor((perMinute * chains.watchEveryMs) / MINUTE_MS)));
  }

  /** A new run's budget. */
  forRun(): CallBudget {
    const allowance = this.perRun();
    const perMinute = this.config.payments.chains.tron?.maxCallsPerMinute ?? 0;
    let used = 0;
    return {
      take: async () => {
        if (used >= allowance) {
          return false;
        }
        const now = this.clock();
        const member = randomUUID();
        const taken = await runScript<number>(this.redis, 'gatewayTronGridCall', KEY, now, perMinute, member);
        if (taken !== 1) {
          return false;
        }
        used++;
        return true;
      },
    };
  }
}
