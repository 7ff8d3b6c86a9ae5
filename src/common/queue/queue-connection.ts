import { ConnectionOptions } from 'bullmq';
import { createRedis } from 'src/common/redis/redis-client';
import { RedisTarget } from 'src/config/redis-config';

/**
 * BullMQ's key prefix. A hash tag: each BullMQ script touches several keys of one queue
 * (`{gateway}:billing:wait`, `…:meta`, `…:events`), which a Redis Cluster runs only when they share
 * a slot. The same prefix on one Redis, so that both run one scheme; the README's upgrade notes say
 * what happens to jobs left under the former prefix `gateway`.
 */
export const QUEUE_PREFIX = '{gateway}';

/** The DI token of the connection every queue, worker and QueueEvents of the process derives from. */
export const QUEUE_CONNECTION = Symbol('QUEUE_CONNECTION');

/**
 * What BullMQ connects with: options on one Redis (each queue opens its own connections, as
 * before); on a cluster one Cluster client that queues share and workers duplicate for their
 * blocking reads (BullMQ takes a cluster only as a client). Null retries: BullMQ's own loops retry.
 */
export function queueConnectionOf(target: RedisTarget): ConnectionOptions {
  return target.kind === 'single' ? { url: target.url } : createRedis(target, { maxRetriesPerRequest: null });
}
