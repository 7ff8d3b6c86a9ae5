import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { LOGGER } from 'src/common/logging/logger';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';

const SWEEP_PAGE = 1_000;

/**
 * Closes the holds a dead API process left open. A hold with recorded usage is settlement's to
 * close; one with no recorded usage after HOLD_SWEEP_AGE_MS (30 minutes; longer than any request may
 * run, so a live request is never swept) belongs to an answer that never completed: it
 * is released unbilled (the client did not get a whole answer; holding its money forever would be worse).
 */
@Injectable()
export class HoldSweeperService {
  constructor(
    private readonly gate: BalanceGateService,
    private readonly usage: UsageQueueService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Ages are Redis's clock, the one that stamped the holds: process clocks never matter. */
  async sweep(olderThanMs = this.config.holdSweepAgeMs): Promise<number> {
    let released = 0;
    // Holds that stay (their usage is recorded: settlement's) keep their place in the index, so the
    // next page starts after them; without that, a backlog of them would hide every orphan behind it.
    let kept = 0;
    for (;;) {
      const page = await this.gate.staleHolds(olderThanMs, SWEEP_PAGE, kept);
      for (const [accountId, requestId] of page) {
        // Atomic in Redis: refused when usage is recorded for the hold, even if recorded just now.
        if (await this.usage.release(accountId, requestId)) {
          released++;
          this.logger.warn({ accountId, reqId: requestId }, 'released an orphaned hold (its API process died)');
        } else {
          kept++;
        }
      }
      if (page.length < SWEEP_PAGE) {
        return released;
      }
    }
  }
}
