import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { BillingJob, QueueName, SettleCompletionPayload } from 'src/common/queue/queue.constants';

/** The one producer of billing jobs. */
@Injectable()
export class BillingQueue {
  constructor(@InjectQueue(QueueName.Billing) private readonly queue: Queue) {}

  async settle(payload: SettleCompletionPayload): Promise<void> {
    // add() rather than addBulk(): the jobId makes a repeated enqueue of one request a no-op.
    await this.queue.add(BillingJob.SettleCompletion, payload, {
      jobId: payload.requestId,
      attempts: 20,
      backoff: { type: 'exponential', delay: 1_000 },
      // Kept an hour for operators to inspect; deduplication does not depend on it (Postgres does that).
      removeOnComplete: { age: 3_600, count: 50_000 },
      removeOnFail: false,
    });
  }

  /** Whether a settlement job for this request is still waiting, running or failed (not yet applied). */
  async isPending(requestId: string): Promise<boolean> {
    const job = await this.queue.getJob(requestId);
    if (!job) {
      return false;
    }
    return !(await job.isCompleted());
  }
}
