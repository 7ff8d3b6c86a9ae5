import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { inJob } from 'src/common/logging/job-context';
import { traced } from 'src/common/telemetry/tracing';
import { Job, Queue, UnrecoverableError } from 'bullmq';
import { QueueName } from 'src/common/queue/queue.constants';
import { PaymentJob, PaymentJobPayloads } from 'src/modules/payments/confirmation/payment-queue';
import {
  ConfirmationRefused,
  PaymentConfirmation,
} from 'src/modules/payments/confirmation/payment-confirmation.service';
import { ReconciliationService } from 'src/modules/payments/confirmation/reconciliation.service';

/** The sweep runs as often as the poller's longest interval, and at least every minute. */
const SWEEP_OVERDUE_AT_MOST_EVERY_MS = 60_000;

/**
 * The payment-confirmation worker; registered only in the worker process. A confirmation is short, so
 * its lock is short: a worker killed in the middle (its transaction rolled back by Postgres) has its job
 * picked up again by another within seconds.
 */
@Processor(QueueName.Payments, { concurrency: 8, lockDuration: 10_000, stalledInterval: 5_000 })
export class PaymentsProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly confirmation: PaymentConfirmation,
    private readonly reconciliation: ReconciliationService,
    @InjectQueue(QueueName.Payments) private readonly queue: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  /** Failed jobs are removed (their ids must stay free); this line is what remains of one. */
  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.error(
      { job: job?.name, jobId: job?.id, attempts: job?.attemptsMade, err: error.message },
      'payment job failed',
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.upsertJobScheduler(
      PaymentJob.SweepOverdue,
      { every: Math.min(SWEEP_OVERDUE_AT_MOST_EVERY_MS, this.config.payments.pollDelaysMs.at(-1)!) },
      { name: PaymentJob.SweepOverdue, opts: { removeOnComplete: true, removeOnFail: 1_000 } },
    );
  }

  /** Every line logged while the job runs carries its name and id. */
  process(job: Job<PaymentJobPayloads[PaymentJob], unknown, string>): Promise<unknown> {
    return inJob(job, () => this.run(job));
  }

  private async run(job: Job<PaymentJobPayloads[PaymentJob], unknown, string>): Promise<unknown> {
    const name = job.name as PaymentJob;
    switch (name) {
      case PaymentJob.Confirm:
        return this.confirm(job as Job<PaymentJobPayloads[PaymentJob.Confirm]>);
      case PaymentJob.Reconcile: {
        const { orderId, attempt, via } = job.data as PaymentJobPayloads[PaymentJob.Reconcile];
        return this.reconciliation.reconcile(orderId, attempt, via);
      }
      case PaymentJob.SweepOverdue:
        return this.reconciliation.sweepOverdue();
      default:
        throw new Error(`No handler for payment job '${String(name)}'`);
    }
  }

  /** In a span of its own when tracing is on: the order, the job and the outcome (no payer data). */
  private confirm(job: Job<PaymentJobPayloads[PaymentJob.Confirm]>): Promise<string> {
    const attributes = {
      'gateway.order_id': job.data.orderId,
      'gateway.job_id': job.id ?? '',
      'gateway.via': 'webhook',
    };
    return traced('payment confirmation', attributes, async (span) => {
      const outcome = await this.confirmOrder(job);
      span?.set({ 'gateway.outcome': outcome });
      return outcome;
    });
  }

  private async confirmOrder(job: Job<PaymentJobPayloads[PaymentJob.Confirm]>): Promise<string> {
    const { orderId, evidence } = job.data;
    try {
      const { outcome } = await this.confirmation.confirm(orderId, evidence, 'webhook');
      if (outcome === 'credited') {
        // The job was added when the webhook had verified the notification: this is our part of the delay.
        workerMetrics.paymentConfirmationLag.observe({ via: 'webhook' }, (Date.now() - job.timestamp) / 1000);
      }
      return outcome;
    } catch (error) {
      // The webhook checked the order and amount before handing the job over; refused here means the
      // order changed meanwhile, and no retry can change the answer.
      throw error instanceof ConfirmationRefused ? new UnrecoverableError(error.message) : error;
    }
  }
}
