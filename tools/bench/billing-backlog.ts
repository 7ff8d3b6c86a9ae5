import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { QUEUE_PREFIX } from 'src/common/queue/queue-connection';
import { createRedis, RedisClient } from 'src/common/redis/redis-client';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { redisTargetOf } from 'src/config/redis-config';

/** BullMQ keys of the billing queue: its prefix (queue-connection.ts), queue `billing`. */
const KEY = `${QUEUE_PREFIX}:billing`;

export interface BillingBacklog {
  /** Completions recorded and not settled yet, right after the run (UsageQueueService.backlog). */
  waiting: number;
  /** Settlement jobs being processed at that moment (each settles a batch). */
  active: number;
  /** Scheduled jobs (the periodic settlement pass and hold sweep sit here, so 2 is the idle value). */
  delayed: number;
  /** Settlement jobs out of attempts. Should stay 0. */
  failed: number;
  /** From the end of the run until nothing was left unsettled; null if not within the drain limit. */
  drainMs: number | null;
}

/**
 * Reads the settlement backlog straight from Redis. The API records each completion's usage and
 * the worker settles them in batches in Postgres; a backlog that grows run after run, or does not
 * drain, means settlement cannot keep up with the traffic.
 */
export class BillingBacklogProbe {
  private readonly redis: RedisClient;
  /** Every completion recorded by an API process and not settled yet, counted as the worker's metrics count it. */
  private readonly usage: UsageQueueService;

  constructor(redisUrl: string) {
    this.redis = createRedis(redisTargetOf(redisUrl, undefined), { maxRetriesPerRequest: 1 });
    this.usage = new UsageQueueService(this.redis);
  }

  /** Snapshot now, then waits (up to `drainLimitMs`) for the backlog to clear so the next run starts clean. */
  async measure(drainLimitMs: number): Promise<BillingBacklog> {
    const startedAt = performance.now();
    const first = await this.counts();
    let drainMs: number | null = null;
    while (performance.now() - startedAt < drainLimitMs) {
      const now = await this.counts();
      if (now.waiting === 0) {
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
    const [{ count: waiting }, results] = await Promise.all([
      this.usage.backlog(),
      // The queue's keys share its hash tag: one MULTI on a cluster too.
      this.redis.multi().llen(`${KEY}:active`).zcard(`${KEY}:delayed`).zcard(`${KEY}:failed`).exec(),
    ]);
    const [active, delayed, failed] = (results ?? []).map(([, value]) => Number(value));
    return { waiting, active, delayed, failed };
  }
}
