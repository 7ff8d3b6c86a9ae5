import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { BalanceGate } from 'src/modules/ledger/balance-gate';

/** Longer than any request may run (upstream timeouts included), so a live request is never swept. */
export const HOLD_TIMEOUT_MS = 30 * 60_000;
/** Usage recorded this long ago without a queued job: its API process died before enqueuing. */
export const USAGE_ORPHAN_MS = 60_000;
const SWEEP_LIMIT = 1_000;

/**
 * Closes what a dead API process left open. A completed answer's usage is recorded before its last
 * bytes; if no settlement job followed within a minute, the sweeper enqueues it from the record.
 * A hold with no recorded usage after 30 minutes belongs to an answer that never completed: it is
 * released unbilled (the client did not get a whole answer; holding its money forever would be worse).
 */
@Injectable()
export class HoldSweeper {
  constructor(
    private readonly gate: BalanceGate,
    private readonly queue: BillingQueue,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async sweep(olderThanMs = HOLD_TIMEOUT_MS, usageOlderThanMs = USAGE_ORPHAN_MS): Promise<number> {
    await this.enqueueOrphanedUsage(usageOlderThanMs);
    let released = 0;
    for (const [accountId, requestId] of await this.gate.staleHolds(olderThanMs, SWEEP_LIMIT)) {
      if ((await this.queue.isPending(requestId)) || (await this.gate.hasRecordedUsage(accountId, requestId))) {
        continue;
      }
      if (await this.gate.release(accountId, requestId)) {
        released++;
        this.logger.warn({ accountId, reqId: requestId }, 'released an orphaned hold (its API process died)');
      }
    }
    return released;
  }

  /** Completed answers whose settlement job was never enqueued are settled from what was recorded. */
  private async enqueueOrphanedUsage(olderThanMs: number): Promise<void> {
    for (const [, requestId, payload] of await this.gate.staleUsage(olderThanMs, SWEEP_LIMIT)) {
      if (await this.queue.isPending(requestId)) {
        continue;
      }
      await this.queue.settle(JSON.parse(payload) as SettleCompletionPayload);
      this.logger.warn({ reqId: requestId }, 'enqueued the settlement of a completion whose API process died');
    }
  }
}
