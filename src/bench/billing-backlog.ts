import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';

/** BullMQ keys of the billing queue: prefix `gateway` (core.module.ts), queue `billing`. */
const KEY = 'gateway:billing';

export interface BillingBacklog {
  /** Settlement jobs waiting for the worker right after the run (LLEN gateway:billing:wait). */
  waiting: number;
  /** Being processed at that moment. */
  active: number;
  /** Waiting for a retry (the repeatable hold sweep also sits here, so 1 is the idle value). */
  delayed: number;
  /** Out of attempts: settlements that did not happen. Should stay 0. */
  failed: number;
  /** From the end of the run until waiting and active reached 0; null if not within the drain limit. */
  drainMs: number | null;
}

/**
 * Reads the billing queue straight from Redis. The API enqueues one settlement per completion
 * and the worker applies them in Postgres; a backlog that grows run after run, or does not
 * drain, means settlement cannot keep up with the traffic.
 */
export class BillingBacklogProbe {
  private readonly redis: Redis;

  constructor(redisUrl: string) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  }

  /** Snapshot now, then waits (up to `drainLimitMs`) for the backlog to clear so the next run starts clean. */
  async measure(drainLimitMs: number): Promise<BillingBacklog> {
    const startedAt = performance.now();
    const first = await this.counts();
    let drainMs: number | null = null;
    while (performance.now() - startedAt < drainLimitMs) {
      const now = await this.counts();
      if (now.waiting + now.active === 0) {
        drainMs = Math.round(performance.now() - startedAt);
        break;
      }
      await sleep(100);
    }
    const last = await this.counts();
    return { ...first, failed: last.failed, drainMs };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async counts(): Promise<Omit<BillingBacklog, 'drainMs'>> {
    const results = await this.redis
      .multi()
      .llen(`${KEY}:wait`)
      .zcard(`${KEY}:prioritized`)
      .llen(`${KEY}:active`)
      .zcard(`${KEY}:delayed`)
      .zcard(`${KEY}:failed`)
      .exec();
    const [wait, prioritized, active, delayed, failed] = (results ?? []).map(([, value]) => Number(value));
    return { waiting: wait + prioritized, active, delayed, failed };
  }
}
