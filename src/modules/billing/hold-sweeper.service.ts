import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { BalanceGate } from 'src/modules/ledger/balance-gate';

/** Longer than any request may run (upstream timeouts included), so a live request is never swept. */
export const HOLD_TIMEOUT_MS = 30 * 60_000;
const SWEEP_LIMIT = 1_000;

/**
 * Releases holds that no settlement will ever close: their API process died before the answer was
 * complete, so no usage was recorded. Such a request is not billed (the client did not get a whole
 * answer); holding its money forever would be worse. Holds whose settlement job is still queued are left alone.
 */
@Injectable()
export class HoldSweeper {
  constructor(
    private readonly gate: BalanceGate,
    private readonly queue: BillingQueue,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async sweep(olderThanMs = HOLD_TIMEOUT_MS): Promise<number> {
    let released = 0;
    for (const [accountId, requestId] of await this.gate.staleHolds(olderThanMs, SWEEP_LIMIT)) {
      if (await this.queue.isPending(requestId)) {
        continue;
      }
      if (await this.gate.release(accountId, requestId)) {
        released++;
        this.logger.warn({ accountId, reqId: requestId }, 'released an orphaned hold (its API process died)');
      }
    }
    return released;
  }
}
