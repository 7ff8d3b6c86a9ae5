/**
 * The shared client for commands (rate limits, caches, queues' producers): a `RedisClient`
 * (redis-client.ts), one Redis or a Redis Cluster.
 */
export const REDIS = Symbol('REDIS');
