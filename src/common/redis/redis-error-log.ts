import { EventEmitter } from 'node:events';
import { Logger } from 'pino';

// A Redis outage makes every client fail on each reconnect attempt; one line per client this often says enough.
const LOG_INTERVAL_MS = 10_000;

/**
 * Gives `emitter` (an ioredis client, or a BullMQ queue or worker, which re-emit their connections'
 * errors) an 'error' listener that writes one structured line: no stack, no URL credentials, and at
 * most one line per client every ten seconds, counting the ones left out. Without a listener
 * ioredis prints every error's stack to stderr ("[ioredis] Unhandled error event"), and BullMQ
 * does the same through console.error.
 */
export function logRedisErrors(emitter: EventEmitter, logger: Logger, client: string): void {
  let lastLoggedAt = -Infinity;
  let unlogged = 0;
  emitter.on('error', (error: Error & { code?: unknown }) => {
    const now = Date.now();
    if (now - lastLoggedAt < LOG_INTERVAL_MS) {
      unlogged++;
      return;
    }
    const code = typeof error.code === 'string' ? error.code : undefined;
    logger.error({ client, code, err: withoutCredentials(String(error.message)), unlogged }, 'redis error');
    lastLoggedAt = now;
    unlogged = 0;
  });
  emitter.on('ready', () => {
    if (lastLoggedAt > -Infinity) {
      logger.info({ client, unlogged }, 'redis connection restored');
      lastLoggedAt = -Infinity;
      unlogged = 0;
    }
  });
}

/** `redis://user:password@host` → `redis://[redacted]@host`, wherever a URL appears in the text. */
export function withoutCredentials(text: string): string {
  return text.replace(/\/\/[^\s/@]*@/g, '//[redacted]@');
}
