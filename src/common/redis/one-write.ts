import Redis from 'ioredis';

/**
 * Runs `issue`, and the Redis commands it sends synchronously leave in one socket write. ioredis
 * writes each command as it is called; on this path every write is a syscall that wakes Redis, and
 * those dominated the API's per-request CPU. The replies still resolve each command's own promise.
 */
export function inOneWrite<T>(redis: Redis, issue: () => T): T {
  const stream = redis.status === 'ready' ? redis.stream : undefined;
  stream?.cork();
  try {
    return issue();
  } finally {
    stream?.uncork();
  }
}
