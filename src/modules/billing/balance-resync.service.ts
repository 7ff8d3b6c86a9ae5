import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';

/** How far back a balance change outside settlement is checked: far longer than a Redis partition. */
const RESYNC_WINDOW_SECONDS = 24 * 60 * 60;
/** Changes checked per pass, newest first: bounded work however many there were. */
const RESYNC_LIMIT = 1_000;

/**
 * Makes the Redis snapshot catch up with Postgres for accounts an operator adjusted (or topped up)
 * recently. The API pushes such a balance at once and retries in process, but a Redis that stays
 * unreachable long enough, or an API that stops, loses that push; if the same Redis then comes back
 * (no restart, so no new epoch), admissions would trust the older balance, a debit not limiting
 * them, until the account is next settled. Settlement needs none of this: its claims come back.
 */
@Injectable()
export class BalanceResyncService {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly gate: BalanceGateService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** One pass; returns how many snapshots were behind Postgres and were pushed. */
  async resync(): Promise<number> {
    const snapshots = await this.ledger.recentlyAdjustedBalances(RESYNC_WINDOW_SECONDS, RESYNC_LIMIT);
    const behind = await this.gate.resync(snapshots);
    if (behind > 0) {
      this.logger.warn({ accounts: behind }, 'pushed adjusted balances that Redis had missed');
    }
    return behind;
  }
}
