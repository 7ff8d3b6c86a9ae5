import Redis from 'ioredis';
import { isCluster, RedisClient } from 'src/common/redis/redis-client';

/** Per client, the write that leaves at the end of this turn, while the socket is corked. */
const writeOfThisTurn = new WeakMap<Redis, Promise<void>>();

/**
 * Runs `issue`; the Redis commands it sends leave in one socket write together with every other
 * command this client sends in the same event-loop turn. ioredis writes each command as it is
 * called; on the completion path every write is a syscall that wakes Redis, and those were the
 * largest item of the API's per-request CPU. Under load one turn handles many requests, so their
 * admissions and usage records share a write (50 clients, instant upstream: +14–18 % completions
 * per second). The socket stays corked until the turn's check phase (`setImmediate`), after the
 * I/O callbacks and promise reactions of the turn, so a lone request waits for nothing else; a
 * busy turn delays its first command by the rest of the turn, as it does every other command this
 * client sends meanwhile.
 * The replies still resolve each command's own promise.
 * On a Redis Cluster this does nothing: the commands of one turn go to the masters that own their
 * keys, over a connection each, and corking one of them would hold back only part of the turn (and
 * a connection ioredis replaces after a failover or a resharding would stay corked). Correctness
 * first: each command is written as it is called, as without this function.
 */
export function inOneWrite<T>(redis: RedisClient, issue: () => T): T {
  if (isCluster(redis)) {
    return issue();
  }
  const stream = redis.status === 'ready' ? redis.stream : undefined;
  if (stream && !writeOfThisTurn.has(redis)) {
    stream.cork();
    writeOfThisTurn.set(
      redis,
      new Promise((resolve) =>
        setImmediate(() => {
          writeOfThisTurn.delete(redis);
          stream.uncork();
          resolve();
        }),
      ),
    );
  }
  return issue();
}

/**
 * Resolves once the commands this client issued so far in this turn have been handed to the
 * operating system: at the turn's check phase when inOneWrite holds them back, at once otherwise
 * (ioredis wrote them as they were called). Code that must not act before a command has left the
 * process (an answer's last bytes after its usage record) waits for this, not for Redis's reply.
 * On a cluster at once: inOneWrite holds nothing back there, and a node's connection writes a
 * command as it is called.
 */
export function writeOfTurn(redis: RedisClient): Promise<void> {
  return isCluster(redis) ? Promise.resolve() : (writeOfThisTurn.get(redis) ?? Promise.resolve());
}

/**
 * Whether a command issued now is written to Redis's socket in this turn. ioredis writes a command
 * at once only on a ready, writable connection; otherwise it waits in the offline queue for a
 * reconnection that may never come, and the caller should take its failure path instead of waiting.
 */
export function writesNow(redis: RedisClient): boolean {
  if (isCluster(redis)) {
    // The cluster client is ready once it knows every slot's master; a command for a master that
    // just went away waits for the slots to be refreshed, bounded by maxRetriesPerRequest.
    return redis.status === 'ready';
  }
  const stream = redis.stream as (typeof redis.stream & { writable?: boolean }) | undefined;
  return redis.status === 'ready' && stream?.writable === true;
}
