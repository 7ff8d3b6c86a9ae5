import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { BillingJob, QueueName } from 'src/common/queue/queue.constants';

/**
 * Recordings within this window share one settlement job: a job per completion cost the API a
 * BullMQ script and the worker a job's bookkeeping per request, several times the settlement itself.
 */
const COALESCE_MS = 100;

/** The one producer of billing jobs. */
@Injectable()
export class BillingQueue implements OnModuleDestroy {
  private pending: NodeJS.Timeout | null = null;

  constructor(
    @InjectQueue(QueueName.Billing) private readonly queue: Queue,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Asks a worker to settle what is recorded, within COALESCE_MS. The job is enqueued after every
   * recording it answers for, and a worker claims only when it runs, so no recording is missed; a
   * recording whose process dies before the enqueue is settled by the worker's periodic pass.
   */
  requestSettlement(): void {
    this.pending ??= setTimeout(() => {
      this.pending = null;
      this.enqueueSettlement().catch((error: Error) =>
        this.logger.warn({ err: error.message }, 'could not enqueue settlement; the periodic pass will settle'),
      );
    }, COALESCE_MS);
  }

  async enqueueSettlement(): Promise<void> {
    await this.queue.add(BillingJob.SettleRecorded, {}, { removeOnComplete: true, removeOnFail: 1_000 });
  }

  /**
   * On shutdown, recordings made so far are handed over at once. Streams that finish during the
   * HTTP drain after this still ask as usual; one whose request was pending when the queue closed
   * is settled by the workers' periodic pass.
   */
  async onModuleDestroy(): Promise<void> {
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = null;
      await this.enqueueSettlement().catch(() => undefined);
    }
  }
}
