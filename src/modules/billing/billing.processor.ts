import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { Job, Queue } from 'bullmq';
import { BillingJob, BillingJobPayloads, QueueName } from 'src/common/queue/queue.constants';
import { HoldSweeper } from 'src/modules/billing/hold-sweeper.service';
import { SettlementService } from 'src/modules/billing/settlement.service';

const SWEEP_EVERY_MS = 60_000;

/** The billing queue's consumer; registered only in the worker process. */
@Processor(QueueName.Billing, { concurrency: 256 })
export class BillingProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly settlement: SettlementService,
    private readonly sweeper: HoldSweeper,
    @InjectQueue(QueueName.Billing) private readonly queue: Queue,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.upsertJobScheduler(
      BillingJob.SweepHolds,
      { every: SWEEP_EVERY_MS },
      { name: BillingJob.SweepHolds },
    );
  }

  async process(job: Job<BillingJobPayloads[BillingJob], unknown, string>): Promise<unknown> {
    const name = job.name as BillingJob;
    switch (name) {
      case BillingJob.SettleCompletion:
        return this.handleSettleCompletion(job.data as BillingJobPayloads[BillingJob.SettleCompletion]);
      case BillingJob.SweepHolds:
        return this.handleSweepHolds();
      default:
        throw new Error(`No handler for billing job '${String(name)}'`);
    }
  }

  private handleSettleCompletion(payload: BillingJobPayloads[BillingJob.SettleCompletion]): Promise<void> {
    return this.settlement.settle(payload);
  }

  private handleSweepHolds(): Promise<number> {
    return this.sweeper.sweep();
  }
}
