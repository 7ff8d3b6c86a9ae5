import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { JobsOptions, Queue, QueueEvents } from 'bullmq';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { QueueName } from 'src/common/queue/queue.constants';
import { EvidencePayload, PaymentJob, PaymentJobPayloads } from 'src/modules/payments/confirmation/payment-queue';

/** A confirmation that cannot commit (Postgres away) is retried this often before the job fails. */
const CONFIRM_ATTEMPTS = 5;
const RETRY_OPTIONS: JobsOptions = { attempts: CONFIRM_ATTEMPTS, backoff: { type: 'exponential', delay: 500 } };
/**
 * A finished confirmation is kept a while, so a duplicate notification finds it and waits on nothing;
 * a failed one is removed, so the wallet's next resend can try again under the same id.
 */
const CONFIRM_OPTIONS: JobsOptions = { ...RETRY_OPTIONS, removeOnComplete: { age: 3_600 }, removeOnFail: true };
/**
 * Poll ids dedupe the chains of one order (a sweep while a poll waits adds none); a failed poll is
 * removed too (the worker logs it), or its id would refuse every later poll of the order.
 */
// Polls are prioritised (BullMQ runs jobs without a priority first): a notification's confirmation, which a
// webhook waits for, never queues behind polls that a slow wallet holds for seconds each.
// An operator's recheck, waited for like a notification, is not.
const RECHECK_OPTIONS: JobsOptions = { ...RETRY_OPTIONS, removeOnComplete: true, removeOnFail: true };
const RECONCILE_OPTIONS: JobsOptions = { ...RECHECK_OPTIONS, priority: 10 };
/**
 * How long a webhook waits for the worker before answering from the order as it stands: less than the
 * 5 s WeChat Pay gives an acknowledgement, so that a wallet hears "send it again" rather than nothing.
 */
const WEBHOOK_WAIT_MS = 4_000;
/** An operator's recheck waits for the provider's answer too, which may take its whole 10 s timeout. */
const RECHECK_WAIT_MS = 15_000;

/**
 * The one producer of payment jobs, in both processes. The API waits for the jobs it hands over
 * (a webhook answers the wallet only once the credit committed); the worker schedules the next poll.
 */
@Injectable()
export class PaymentJobs implements OnModuleDestroy {
  private events: Promise<QueueEvents> | null = null;

  constructor(
    @InjectQueue(QueueName.Payments) private readonly queue: Queue,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    // Each wait listens on the queue (and on the events) until its job ends or its time is up: a
    // wallet's burst of duplicate notifications is many listeners at once, not a leak to warn of.
    queue.setMaxListeners(0);
  }

  /**
   * Hands a verified notification to the worker and waits for the job to end. The job id is the
   * order's, so concurrent duplicates share one job. Resolves either way: the caller reads the order.
   */
  async confirmAndWait(orderId: string, evidence: EvidencePayload): Promise<void> {
    const payload: PaymentJobPayloads[PaymentJob.Confirm] = { orderId, evidence };
    const job = await this.queue.add(PaymentJob.Confirm, payload, { ...CONFIRM_OPTIONS, jobId: orderId });
    await job.waitUntilFinished(await this.queueEvents(), WEBHOOK_WAIT_MS).catch(() => undefined);
  }

  /** The poll `attempt` of a pending order, after `delayMs`. */
  async schedulePoll(orderId: string, attempt: number, delayMs: number): Promise<void> {
    const payload: PaymentJobPayloads[PaymentJob.Reconcile] = { orderId, attempt, via: 'poller' };
    await this.queue.add(PaymentJob.Reconcile, payload, {
      ...RECONCILE_OPTIONS,
      delay: delayMs,
      jobId: `poll-${orderId}-${attempt}`,
    });
  }

  /** An operator's recheck: the worker asks the provider now; resolves once it did (or RECHECK_WAIT_MS passed). */
  async recheckAndWait(orderId: string): Promise<void> {
    const payload: PaymentJobPayloads[PaymentJob.Reconcile] = { orderId, attempt: 0, via: 'recheck' };
    const job = await this.queue.add(PaymentJob.Reconcile, payload, RECHECK_OPTIONS);
    await job.waitUntilFinished(await this.queueEvents(), RECHECK_WAIT_MS).catch(() => undefined);
  }

  /** A last query of an order whose poll chain was lost; one at a time per order. */
  async scheduleOverdue(orderId: string): Promise<void> {
    const payload: PaymentJobPayloads[PaymentJob.Reconcile] = { orderId, attempt: 0, via: 'sweep' };
    await this.queue.add(PaymentJob.Reconcile, payload, { ...RECONCILE_OPTIONS, jobId: `overdue-${orderId}` });
  }

  /**
   * Job completions arrive on a connection of their own, opened by the first wait. It reads every event
   * after the last one written before it opened. BullMQ's default, "from whenever reading starts", only
   * starts once that connection has set itself up, after the first waits checked whether their jobs
   * had finished: a job finishing in between was heard by neither, and its wait ran to its end.
   */
  private queueEvents(): Promise<QueueEvents> {
    this.events ??= this.openQueueEvents().catch((error: Error) => {
      this.events = null;
      throw error;
    });
    return this.events;
  }

  private async openQueueEvents(): Promise<QueueEvents> {
    const [last] = await this.redis.xrevrange(this.queue.keys.events, '+', '-', 'COUNT', 1);
    const events = new QueueEvents(this.queue.name, {
      connection: this.queue.opts.connection,
      prefix: this.queue.opts.prefix,
      lastEventId: last?.[0] ?? '0-0',
    });
    events.setMaxListeners(0);
    try {
      await events.waitUntilReady();
    } catch (error) {
      await events.close();
      throw error;
    }
    return events;
  }

  async onModuleDestroy(): Promise<void> {
    const events = await this.events?.catch(() => null);
    await events?.close();
  }
}
