import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

const overloaded = () =>
  new ApiError(ErrorKind.Overloaded, 'The gateway is overloaded. Retry after a short wait.', null, undefined, {
    'retry-after': '1',
  });

/**
 * Caps the completions this process relays at once. Past the cap a request waits in a short,
 * bounded queue; past the queue (or its wait) it gets 503 at once, so admitted requests keep
 * their latency instead of everyone getting slower together.
 */
@Injectable()
export class ConcurrencyLimiter {
  private active = 0;
  private readonly queue: Waiter[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Resolves with a release function once a slot is free. */
  acquire(): Promise<() => void> {
    const { maxConcurrent, maxQueued, queueWaitMs } = this.config.overload;
    if (this.active < maxConcurrent) {
      return Promise.resolve(this.take());
    }
    if (this.queue.length >= maxQueued || queueWaitMs === 0) {
      metrics.overloaded.inc();
      return Promise.reject(overloaded());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => resolve(this.take()),
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(waiter), 1);
          metrics.overloaded.inc();
          reject(overloaded());
        }, queueWaitMs),
      };
      this.queue.push(waiter);
    });
  }

  private take(): () => void {
    this.active++;
    metrics.activeCompletions.set(this.active);
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      this.active--;
      metrics.activeCompletions.set(this.active);
      const next = this.queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.grant();
      }
    };
  }
}
