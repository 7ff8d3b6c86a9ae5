import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { inJob } from 'src/common/logging/job-context';
import { Job, Queue } from 'bullmq';
import { BillingJob, BillingJobPayloads, QueueName } from 'src/common/queue/queue.constants';
import { BalanceResyncService } from 'src/modules/billing/balance-resync.service';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import { SettlementService } from 'src/modules/billing/settlement.service';

const SWEEP_EVERY_MS = 60_000;
/**
 * Settles without being asked this often: usage an API process recorded just before dying (it
 * never enqueued the job), and usage a dead worker had claimed once its lease lapsed.
 */
const SETTLE_EVERY_MS = 5_000;
/** A debit Redis missed limits admissions at most this long after Redis is reachable again. */
const RESYNC_EVERY_MS = 10_000;

/** The billing queue's consumer; registered only in the worker process. */
@Processor(QueueName.Billing, { concurrency: 4 })
export class BillingProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly settlement: SettlementService,
    private readonly sweeper: HoldSweeperService,
    private readonly resync: BalanceResyncService,
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
    await this.queue.upsertJobScheduler(
      BillingJob.SettleRecorded,
      { every: SETTLE_EVERY_MS },
      { name: BillingJob.SettleRecorded, opts: { removeOnComplete: true, removeOnFail: 1_000 } },
    );
    await this.queue.upsertJobScheduler(
      BillingJob.ResyncBalances,
      { every: RESYNC_EVERY_MS },
      { name: BillingJob.ResyncBalances, opts: { removeOnComplete: true, removeOnFail: 1_000 } },
    );
  }

  /** A pass; when some of it failed, another pass as soon as the first of it may be claimed again. */
  private async settleRecorded(): Promise<number> {
    const { settled, retryInMs } = await this.settlement.settleRecorded();
    if (retryInMs !== null) {
      await this.queue.add(
        BillingJob.SettleRecorded,
        {},
        { delay: retryInMs, removeOnComplete: true, removeOnFail: 1_000 },
      );
    }
    return settled;
  }

  /** Every line logged while the job runs carries its name and id. */
  process(job: Job<BillingJobPayloads[BillingJob], unknown, string>): Promise<unknown> {
    return inJob(job, () => this.run(job));
  }

  private async run(job: Job<BillingJobPayloads[BillingJob], unknown, string>): Promise<unknown> {
    const name = job.name as BillingJob;
    switch (name) {
      case BillingJob.SettleRecorded:
        return this.settleRecorded();
      case BillingJob.SweepHolds:
        await this.sweeper.repairRegistries();
        return (await this.sweeper.closeSettled()) + (await this.sweeper.sweep());
      case BillingJob.ResyncBalances:
        return this.resync.resync();
      default:
        throw new Error(`No handler for billing job '${String(name)}'`);
    }
  }
}
