import { Injectable } from '@nestjs/common';

/**
 * Counts the work the HTTP server still owes: open responses and running handlers (a stream cut short
 * still records its usage after its socket closed). On SIGTERM, main.ts waits for it to reach zero
 * before anything the handlers use (upstream pools, Redis, Postgres) is closed.
 */
@Injectable()
export class InFlightRequests {
  private active = 0;
  private waiters: (() => void)[] = [];

  get count(): number {
    return this.active;
  }

  /** Counts one piece of work; the returned function ends it (calling it twice counts once). */
  enter(): () => void {
    this.active++;
    let left = false;
    return () => {
      if (left) {
        return;
      }
      left = true;
      this.active--;
      if (this.active === 0) {
        const waiters = this.waiters;
        this.waiters = [];
        waiters.forEach((wake) => wake());
      }
    };
  }

  /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.active === 0) {
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(wake);
    });
  }
}
