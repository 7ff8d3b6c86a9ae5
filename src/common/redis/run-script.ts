import { RedisClient } from 'src/common/redis/redis-client';

/**
 * Runs a Lua script registered with `redis.defineCommand(name, …)`: ioredis adds such commands to
 * the client at runtime only, so its types do not know them. Sent before this returns, so a caller
 * can batch it with others (one-write.ts).
 */
export function runScript<T = unknown>(redis: RedisClient, name: string, ...args: (string | number)[]): Promise<T> {
  return (redis as unknown as Record<string, (...args: (string | number)[]) => Promise<T>>)[name].call(redis, ...args);
}
