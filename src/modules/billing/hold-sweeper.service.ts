import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { LOGGER } from 'src/common/logging/logger';
import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService, BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';

const SWEEP_PAGE = 1_000;
/**
 * Holds of usage settled in Postgres are closed once this old: by then the API that settled the
 * usage without Redis has had its own chance to close the hold, and a worker its chance to close one
 * it just settled, so the sweeper only reads Postgres for the few holds that missed both.
 */
const SETTLED_HOLD_AGE_MS = 60_000;
/**
 * How often a worker lists again every account with open holds or recorded usage (a SCAN of every
 * master): a registration is lost only with a process that died between its write and its
 * registration (account-registry.ts), so this is a slow repair, not the way work is found.
 */
const REPAIR_EVERY_MS = 10 * 60_000;

/**
 * Closes the holds nobody else will. A hold whose usage is already settled in Postgres (by an API
 * that settled it there when Redis did not take its record, and could not close the hold then) is
 * closed with its account's balance pushed, as settlement would have. A hold with recorded usage is
 * settlement's to close. One with neither after HOLD_SWEEP_AGE_MS (30 minutes; longer than any
 * request may run, so a live request is never swept) belongs to an answer that never completed: it
 * is released unbilled (the client did not get a whole answer; holding its money forever would be worse).
 * Postgres is asked before any hold is released: while it is unreachable, holds stay.
 */
@Injectable()
export class HoldSweeperService {
  private repairedAt = -Infinity;

  constructor(
    private readonly gate: BalanceGateService,
    private readonly usage: UsageQueueService,
    private readonly settlement: SettlementRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Closes holds older than `olderThanMs` whose usage is settled, and releases the orphans among them. */
  sweep(olderThanMs = this.config.holdSweepAgeMs): Promise<number> {
    return this.pass(olderThanMs, true);
  }

  /** Closes holds older than `olderThanMs` whose usage is settled in Postgres; leaves every other hold. */
  closeSettled(olderThanMs = SETTLED_HOLD_AGE_MS): Promise<number> {
    return this.pass(olderThanMs, false);
  }

  /**
   * Registers again the accounts whose holds or recorded usage the registries miss, at most once
   * per REPAIR_EVERY_MS per worker (the first sweep after a start included).
   */
  async repairRegistries(now = Date.now()): Promise<void> {
    if (now - this.repairedAt < REPAIR_EVERY_MS) {
      return;
    }
    this.repairedAt = now;
    const [usage, holds] = await Promise.all([this.usage.repairRegistry(), this.gate.repairHoldRegistry()]);
    this.logger.info({ usage, holds }, 'registries of accounts with recorded usage and open holds checked');
  }

  /** Ages are Redis's clock, the one that stamped the holds: process clocks never matter. */
  private async pass(olderThanMs: number, releaseOrphans: boolean): Promise<number> {
    let closed = 0;
    // Holds that stay keep their place in the index, so the next page starts after them; without
    // that, a backlog of them would hide every hold behind it.
    let kept = 0;
    for (;;) {
      const page = await this.gate.staleHolds(olderThanMs, SWEEP_PAGE, kept);
      const settled =
        page.length > 0
          ? await this.settlement.settledWithBalances(page.map(([, requestId]) => requestId))
          : new Map<string, BalanceSnapshot>();
      for (const [accountId, requestId] of page) {
        const snapshot = settled.get(requestId);
        if (snapshot) {
          await this.usage.releaseMany([{ accountId, requestId, snapshot }]);
          closed++;
          workerMetrics.holdsReleased.inc({ reason: 'settled' });
          this.logger.warn({ accountId, reqId: requestId }, 'closed the hold of usage already settled in Postgres');
        } else if (releaseOrphans && (await this.usage.release(accountId, requestId))) {
          // Atomic in Redis: refused when usage is recorded for the hold, even if recorded just now.
          closed++;
          workerMetrics.holdsReleased.inc({ reason: 'orphaned' });
          this.logger.warn({ accountId, reqId: requestId }, 'released an orphaned hold (its API process died)');
        } else {
          kept++;
        }
      }
      if (page.length < SWEEP_PAGE) {
        return closed;
      }
    }
  }
}
