import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { CancelSignal } from 'src/common/http/cancel-signal';

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

const overloaded = (message = 'The gateway is overloaded. Retry after a short wait.') =>
  new ApiError(ErrorKind.Overloaded, message, null, undefined, { 'retry-after': '1' });

/**
 * Caps the completions this process relays at once. Past the cap a request waits in a short,
 * bounded queue; past the queue (or its wait) it gets 503 at once, so admitted requests keep
 * their latency instead of everyone getting slower together. One account may hold at most
 * MAX_CONCURRENT_PER_ACCOUNT of the running and queued places, so it cannot take them all. A
 * waiter whose client hung up leaves the queue at once.
 */
@Injectable()
export class ConcurrencyLimiter {
  private active = 0;
  private readonly queue: Waiter[] = [];
  /** Running and queued completions per account; an account at zero has no entry. */
  private readonly perAccount = new Map<string, number>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Resolves with a release function once a slot is free; rejects with the signal's reason if it aborts first. */
  acquire(accountId: string, signal: CancelSignal): Promise<() => void> {
    const { maxConcurrent, maxQueued, queueWaitMs, maxPerAccount } = this.config.overload;
    if (signal.aborted) {
      return Promise.reject(signal.reason);
    }
    const held = this.perAccount.get(accountId) ?? 0;
    if (held >= maxPerAccount) {
      metrics.overloaded.inc();
      return Promise.reject(
        overloaded(`This account already has ${held} completions in progress on this server. Retry when one ends.`),
      );
    }
    if (this.active < maxConcurrent) {
      this.perAccount.set(accountId, held + 1);
      return Promise.resolve(this.take(accountId));
    }
    if (this.queue.length >= maxQueued || queueWaitMs === 0) {
      metrics.overloaded.inc();
      return Promise.reject(overloaded());
    }
    this.perAccount.set(accountId, held + 1);
    return new Promise((resolve, reject) => {
      const leave = (error: Error) => {
        clearTimeout(waiter.timer);
        signal.removeEventListener('abort', onAbort);
        this.queue.splice(this.queue.indexOf(waiter), 1);
        this.uncount(accountId);
        reject(error);
      };
      const onAbort = () => leave(signal.reason);
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          signal.removeEventListener('abort', onAbort);
          resolve(this.take(accountId));
        },
        timer: setTimeout(() => {
          metrics.overloaded.inc();
          leave(overloaded());
        }, queueWaitMs),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** A running slot; the account was counted already (when it queued or got the slot at once). */
  private take(accountId: string): () => void {
    this.active++;
    metrics.activeCompletions.set(this.active);
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      this.active--;
      this.uncount(accountId);
      metrics.activeCompletions.set(this.active);
      const next = this.queue.shift();
      if (next) {
        next.grant();
      }
    };
  }

  private uncount(accountId: string): void {
    const held = this.perAccount.get(accountId) ?? 1;
    if (held <= 1) {
      this.perAccount.delete(accountId);
    } else {
      this.perAccount.set(accountId, held - 1);
    }
  }
}
