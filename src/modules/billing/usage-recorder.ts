import { Logger } from 'pino';
import { metrics } from 'src/common/metrics/metrics';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { WindowCorrection } from 'src/common/redis/window-scripts';

/** The two places a completion's usage can be made durable. */
export interface UsageSink {
  /**
   * Sends the usage record to Redis in the caller's turn, settling with Redis's reply; null when it
   * cannot leave now (not connected), so the caller takes the failure path instead of waiting. The
   * token windows' correction goes with it (made once, however often it is sent).
   */
  toRedis(usage: SettleCompletionPayload, correction: WindowCorrection | null): Promise<unknown> | null;
  /** Settles the usage straight into Postgres, charging it at most once (by request id), and closes its hold. */
  toPostgres(usage: SettleCompletionPayload): Promise<void>;
}

export interface RecordingTimings {
  /** How long Redis may take to answer a record before the attempt counts as failed. */
  replyDeadlineMs: number;
  /** Attempts on Redis, the first included, before the usage goes to Postgres. */
  redisAttempts: number;
  /** Pause before the second attempt on Redis; the n-th waits n times this. */
  retryPauseMs: number;
  /** Pause after the first failed fallback, doubling per failure up to `fallbackPauseMaxMs`. */
  fallbackPauseMs: number;
  fallbackPauseMaxMs: number;
  /** A usage neither Redis nor Postgres took for this long is given up: logged whole for an operator. */
  giveUpAfterMs: number;
  /** While the process shuts down, the pause between fallback attempts. */
  hurriedPauseMs: number;
}

export const RECORDING_TIMINGS: RecordingTimings = {
  replyDeadlineMs: 1_000,
  redisAttempts: 3,
  retryPauseMs: 100,
  fallbackPauseMs: 1_000,
  fallbackPauseMaxMs: 30_000,
  // The hold sweeper's age: the usage is not the only thing lost by then.
  giveUpAfterMs: 30 * 60_000,
  hurriedPauseMs: 250,
};

/** One attempt to record a usage in Redis (UsageSink.toRedis with its correction). */
type Send = () => Promise<unknown> | null;

/** A first attempt on Redis, waiting for its reply. */
interface AwaitedReply {
  usage: SettleCompletionPayload;
  send: Send;
  sentAt: number;
}

/** How often, within a reply's deadline, the late replies are looked for: one is noticed at most a quarter late. */
const SWEEPS_PER_DEADLINE = 4;
/** While shutting down, how often the usages not yet durable are counted. */
const DRAIN_POLL_MS = 5;

type FailureOutcome = 'retried_ok' | 'fallback_settled' | 'fallback_failed' | 'lost';

/**
 * Makes usage durable without holding the answer for Redis's reply. The record leaves in the
 * caller's turn; its reply is followed up here: an error or no reply within the deadline is
 * retried a bounded number of times, then the usage is settled straight into Postgres (the same
 * idempotent settlement a worker runs, so a record that did reach Redis is charged once). When
 * Postgres fails too, both are tried again with a backoff until one takes it, the process stops,
 * or `giveUpAfterMs` passes; then the usage is logged whole (no content: ids, tokens, prices).
 */
export class UsageRecorder {
  /**
   * First attempts waiting for Redis's reply, in the order they left. Most end at the reply; their
   * deadline is checked by one sweep for all of them rather than a timer each, which cost a
   * completion about as much as the record's encoding (docs/performance.md, "The request path's small costs").
   */
  private readonly awaiting = new Set<AwaitedReply>();
  private sweep: NodeJS.Timeout | null = null;
  /** Usages whose first attempt failed, by the promise that follows each up. */
  private readonly pending = new Map<Promise<void>, SettleCompletionPayload>();
  /** Wakes the pauses under way, for a shutdown that cannot wait for them. */
  private readonly wakes = new Set<() => void>();
  private hurrying = false;
  private stopped = false;

  constructor(
    private readonly sink: UsageSink,
    private readonly logger: Logger,
    private readonly timings: RecordingTimings = RECORDING_TIMINGS,
  ) {}

  /** Sends the usage to Redis now and follows it up in the background; true when it left in this turn. */
  record(usage: SettleCompletionPayload, correction: WindowCorrection | null = null): boolean {
    // Every attempt on Redis carries the correction (a usage settled in Postgres leaves the estimate counted).
    const send = () => this.sink.toRedis(usage, correction);
    const reply = send();
    if (reply === null) {
      this.followUp(usage, 'Redis is not connected', send);
      return false;
    }
    const awaited: AwaitedReply = { usage, send, sentAt: performance.now() };
    this.awaiting.add(awaited);
    if (this.sweep === null) {
      this.sweep = setInterval(() => this.sweepLate(), Math.max(1, this.timings.replyDeadlineMs / SWEEPS_PER_DEADLINE));
      this.sweep.unref();
    }
    reply.then(
      () => this.replied(awaited),
      (error: Error) => {
        if (this.replied(awaited)) {
          this.followUp(usage, error.message, send);
        }
      },
    );
    return true;
  }

  /** Usages sent and not yet confirmed durable. */
  get inFlight(): number {
    return this.awaiting.size + this.pending.size;
  }

  /**
   * On shutdown: pauses end, failures go to Postgres without more attempts on Redis, and this waits
   * at most `timeoutMs` for every usage to be durable. What is still not is logged as lost.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.hurrying = true;
    this.wakes.forEach((wake) => wake());
    const deadline = performance.now() + timeoutMs;
    // Shutdown only: a short poll is simpler than a signal from every way a usage can become durable.
    while (this.inFlight > 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_POLL_MS, deadline - performance.now())));
    }
    if (this.inFlight > 0) {
      this.stopped = true;
      this.awaiting.forEach(({ usage }) => this.lose(usage, 'the process stopped first'));
      this.pending.forEach((usage) => this.lose(usage, 'the process stopped first'));
      this.awaiting.clear();
      this.pending.clear();
    }
  }

  /** The first attempt is over (its reply, or its deadline): false when it was over already. */
  private replied(awaited: AwaitedReply): boolean {
    if (!this.awaiting.delete(awaited)) {
      return false;
    }
    if (this.awaiting.size === 0 && this.sweep) {
      clearInterval(this.sweep);
      this.sweep = null;
    }
    return true;
  }

  /** First attempts past their deadline fail: the oldest are first in the set. */
  private sweepLate(): void {
    const late = performance.now() - this.timings.replyDeadlineMs;
    for (const awaited of this.awaiting) {
      if (awaited.sentAt > late) {
        return;
      }
      if (this.replied(awaited)) {
        this.followUp(awaited.usage, `no reply within ${this.timings.replyDeadlineMs} ms`, awaited.send);
      }
    }
  }

  /** A first attempt failed: more attempts on Redis, then Postgres, in the background. */
  private followUp(usage: SettleCompletionPayload, failure: string, send: Send): void {
    const following = this.follow(usage, failure, send);
    this.pending.set(following, usage);
    void following.then(() => this.pending.delete(following));
  }

  private async follow(usage: SettleCompletionPayload, firstFailure: string, send: Send): Promise<void> {
    try {
      if (!(await this.recordedInRedis(usage, firstFailure, send))) {
        await this.fallBack(usage, send);
      }
    } catch (error) {
      // A bug, not an outage: nothing here may become an unhandled rejection.
      this.lose(usage, (error as Error).message);
    }
  }

  /** After the first attempt's failure, up to the bounded number of attempts. */
  private async recordedInRedis(usage: SettleCompletionPayload, firstFailure: string, send: Send): Promise<boolean> {
    let failure: string | null = firstFailure;
    for (let attempt = 1; ; attempt++) {
      if (failure === null) {
        this.count('retried_ok');
        return true;
      }
      if (attempt >= this.timings.redisAttempts || this.hurrying) {
        this.logger.warn(
          { reqId: usage.requestId, accountId: usage.accountId, attempts: attempt, err: failure },
          'Redis did not take a usage record; settling it in Postgres',
        );
        return false;
      }
      await this.pause(this.timings.retryPauseMs * attempt);
      failure = await this.confirmation(this.hurrying ? null : send());
    }
  }

  /** Postgres, and Redis again between its attempts: whichever takes the usage first. */
  private async fallBack(usage: SettleCompletionPayload, send: Send): Promise<void> {
    const since = performance.now();
    for (let round = 1; ; round++) {
      try {
        await this.sink.toPostgres(usage);
        this.count('fallback_settled');
        this.logger.warn(
          { reqId: usage.requestId, accountId: usage.accountId },
          'usage settled straight into Postgres',
        );
        return;
      } catch (error) {
        this.count('fallback_failed');
        this.logger.error(
          { reqId: usage.requestId, accountId: usage.accountId, round, err: (error as Error).message },
          'usage could be recorded neither in Redis nor in Postgres; trying again',
        );
      }
      if (this.stopped) {
        return;
      }
      if (performance.now() - since >= this.timings.giveUpAfterMs) {
        this.lose(usage, `neither Redis nor Postgres took it for ${this.timings.giveUpAfterMs} ms`);
        return;
      }
      const backoff = Math.min(this.timings.fallbackPauseMaxMs, this.timings.fallbackPauseMs * 2 ** (round - 1));
      await this.pause(this.hurrying ? this.timings.hurriedPauseMs : backoff);
      if (!this.hurrying && (await this.confirmation(send())) === null) {
        this.count('retried_ok');
        return;
      }
    }
  }

  /** null when Redis took the record in time; otherwise why not. Never rejects. */
  private confirmation(reply: Promise<unknown> | null): Promise<string | null> {
    if (reply === null) {
      return Promise.resolve('Redis is not connected');
    }
    const deadlineMs = this.timings.replyDeadlineMs;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(`no reply within ${deadlineMs} ms`), deadlineMs);
      reply.then(
        () => {
          clearTimeout(timer);
          resolve(null);
        },
        (error: Error) => {
          clearTimeout(timer);
          resolve(error.message);
        },
      );
    });
  }

  /** Resolves (undefined) after `ms`, or at once when a shutdown wakes it. */
  private pause(ms: number): Promise<undefined> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakes.delete(wake);
        resolve(undefined);
      };
      const timer = setTimeout(wake, ms);
      this.wakes.add(wake);
    });
  }

  /** One line with everything needed to bill the usage by hand, and nothing of the request's content. */
  private lose(usage: SettleCompletionPayload, reason: string): void {
    this.count('lost');
    this.logger.error(
      { reqId: usage.requestId, usage, err: reason },
      'usage lost: not confirmed in Redis or Postgres; bill it by hand unless a usage record with this request id exists',
    );
  }

  private count(outcome: FailureOutcome): void {
    metrics.usageRecordFailures.inc({ outcome });
  }
}
