import { RedisOptions } from 'ioredis';
import { createRedis, RedisClient } from 'src/common/redis/redis-client';
import { RedisTarget, redisTargetOf } from 'src/config/redis-config';

/** The Redis this run uses (REDIS_URL, or the run's own cluster: REDIS_CLUSTER_NODES), as the app reads it. */
export function testRedisTarget(): RedisTarget {
  return redisTargetOf(process.env.REDIS_URL, process.env.REDIS_CLUSTER_NODES);
}

/** A client of this run's Redis, one server or a cluster, made as the app makes its own. */
export function testRedis(options: RedisOptions = {}): RedisClient {
  return createRedis(testRedisTarget(), options);
}
