import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { BalanceGate } from 'src/modules/ledger/balance-gate';

/** Longer than any request may run (upstream timeouts included), so a live request is never swept. */
export const HOLD_TIMEOUT_MS = 30 * 60_000;
const SWEEP_LIMIT = 1_000;

/**
 * Closes the holds a dead API process left open. A hold with recorded usage is settlement's to
 * close; one with no recorded usage after 30 minutes belongs to an answer that never completed: it
 * is released unbilled (the client did not get a whole answer; holding its money forever would be worse).
 */
@Injectable()
export class HoldSweeper {
  constructor(
    private readonly gate: BalanceGate,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async sweep(olderThanMs = HOLD_TIMEOUT_MS): Promise<number> {
    let released = 0;
    for (const [accountId, requestId] of await this.gate.staleHolds(olderThanMs, SWEEP_LIMIT)) {
      if (await this.gate.hasRecordedUsage(accountId, requestId)) {
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
