import Redis, { Cluster, RedisOptions } from 'ioredis';
import { RedisTarget } from 'src/config/redis-config';
import { withFields } from 'src/common/with-fields';

/**
 * A connection to the gateway's Redis: one server or a Redis Cluster. Both run the same commands
 * and `defineCommand` scripts; on a cluster every script and MULTI touches keys of one hash slot
 * (see the key builders: balance-gate.keys.ts, usage-queue.keys.ts, rate-limit.keys.ts).
 */
export type RedisClient = Redis | Cluster;

/**
 * The one place a Redis client is made (the processes' command client, pub/sub, BullMQ, health,
 * bins, bench tools, tests). `options` are per connection; on a cluster they apply to each node's.
 */
export function createRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  if (target.kind === 'single') {
    return new Redis(target.url, options);
  }
  const { lazyConnect, enableOfflineQueue, ...nodeOptions } = options;
  const { username, password, tls } = target;
  return new Cluster(target.nodes, {
    lazyConnect,
    enableOfflineQueue,
    redisOptions: withFields(nodeOptions, tls ? { username, password, tls: {} } : { username, password }),
    // Slots move when an operator reshards or a replica takes over: follow MOVED/ASK a few times.
    maxRedirections: 16,
  });
}

export function isCluster(redis: RedisClient): redis is Cluster {
  return (redis as Cluster).isCluster === true;
}

/**
 * Every master's connection: the servers that hold keys. SCAN, INFO, FLUSHDB and the like answer
 * for one server only, so code that means "all of Redis" asks each of these.
 */
export function mastersOf(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/** Every key matching `pattern` on every master (SCAN: never blocks Redis for long). */
export async function scanKeys(redis: RedisClient, pattern: string, count = 1_000): Promise<string[]> {
  const keys: string[] = [];
  for (const node of mastersOf(redis)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return keys;
}
