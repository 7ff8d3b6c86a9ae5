import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, OnApplicationBootstrap } from '@nestjs/common';
import { inJob } from 'src/common/logging/job-context';
import { Job, Queue } from 'bullmq';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { QueueName } from 'src/common/queue/queue.constants';
import { ChainWatchJob } from 'src/modules/payments/chain/chain-watch-jobs';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { Erc20Watcher } from 'src/modules/payments/chain/erc20-watcher';
import { Trc20Watcher } from 'src/modules/payments/chain/trc20-watcher';

/**
 * The chain watchers, as repeatable jobs of the worker: each network's job runs every
 * CHAIN_WATCH_EVERY_MS in one worker or another, and resumes from its cursor in Postgres. A run
 * outlasting its lock changes nothing: the network's lease keeps a second run from starting beside it.
 */
@Processor(QueueName.ChainWatch, { concurrency: 2, lockDuration: 60_000 })
export class ChainWatchProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly trc20: Trc20Watcher,
    private readonly erc20: Erc20Watcher,
    @InjectQueue(QueueName.ChainWatch) private readonly queue: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.warn(
      { job: job?.name, err: error.message },
      'chain watch failed; the next run resumes from the cursor',
    );
  }

  /** Schedules the networks that are on, and unschedules those turned off since. */
  async onApplicationBootstrap(): Promise<void> {
    const chains = this.config.payments.chains;
    const every = chains.watchEveryMs;
    for (const [job, on] of [
      [ChainWatchJob.Trc20, chains.tron !== null],
      [ChainWatchJob.Erc20, chains.erc20 !== null],
    ] as const) {
      if (on) {
        await this.queue.upsertJobScheduler(
          job,
          { every },
          { name: job, opts: { removeOnComplete: true, removeOnFail: 100 } },
        );
      } else {
        await this.queue.removeJobScheduler(job);
      }
    }
  }

  /** Every line logged while the job runs carries its name and id. */
  process(job: Job<unknown, unknown, string>): Promise<number | null> {
    return inJob(job, () => this.run(job));
  }

  private async run(job: Job<unknown, unknown, string>): Promise<number | null> {
    const name = job.name as ChainWatchJob;
    switch (name) {
      case ChainWatchJob.Trc20:
        return this.trc20.run();
      case ChainWatchJob.Erc20:
        return this.erc20.run();
      default:
        throw new Error(`No handler for chain watch job '${String(name)}'`);
    }
  }
}
