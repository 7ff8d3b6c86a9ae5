import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Logger } from 'pino';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { LOGGER } from 'src/common/logging/logger';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { SettlementRepository, SettlementResult } from 'src/modules/billing/settlement.repository';
import { BalanceGate } from 'src/modules/ledger/balance-gate';

interface Pending {
  payload: SettleCompletionPayload;
  resolve: () => void;
  reject: (error: unknown) => void;
}

// Jobs arriving within a few milliseconds share one transaction: at high request rates one hot
// account would otherwise take a row lock and a commit per request.
const MAX_BATCH = 200;
const BATCH_WINDOW_MS = 5;

/** Settles completions in small batches, then releases their holds and refreshes the Redis balances. */
@Injectable()
export class SettlementService implements OnModuleDestroy {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repository: SettlementRepository,
    private readonly gate: BalanceGate,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Resolves once the completion is settled (now or earlier); rejects so the job is retried. */
  settle(payload: SettleCompletionPayload): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ payload, resolve, reject });
      if (this.pending.length >= MAX_BATCH) {
        this.flush();
      } else {
        this.timer ??= setTimeout(() => this.flush(), BATCH_WINDOW_MS);
      }
    });
  }

  onModuleDestroy(): void {
    this.flush();
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.pending.splice(0);
    if (batch.length > 0) {
      void this.settleBatch(batch);
    }
  }

  private async settleBatch(batch: Pending[]): Promise<void> {
    try {
      await this.apply(batch.map((item) => item.payload));
      batch.forEach((item) => item.resolve());
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      // One bad job must not hold the others back: retry each on its own, so only it fails.
      this.logger.warn(
        { err: (error as Error).message, size: batch.length },
        'batch settlement failed; settling one by one',
      );
      await Promise.all(batch.map((item) => this.settleBatch([item])));
    }
  }

  private async apply(payloads: SettleCompletionPayload[]): Promise<void> {
    const result = await this.repository.settle(payloads, this.config.referralSharePercent);
    this.report(result);
    // After the commit: a crash here leaves holds in Redis, and the job's retry (or the sweeper) releases them.
    await this.gate.releaseMany(
      payloads.map((payload) => ({
        accountId: payload.accountId,
        requestId: payload.requestId,
        snapshot: result.snapshots.get(payload.accountId),
      })),
    );
    const referrers = [...result.snapshots].filter(([id]) => !payloads.some((payload) => payload.accountId === id));
    await Promise.all(referrers.map(([id, snapshot]) => this.gate.sync(id, snapshot)));
  }

  private report(result: SettlementResult): void {
    for (const requestId of result.unknownAccounts) {
      this.logger.error({ reqId: requestId }, 'settlement for an unknown account: nothing charged');
    }
    for (const shortfall of result.shortfalls) {
      this.logger.error(
        { reqId: shortfall.requestId, accountId: shortfall.accountId, missingNanos: shortfall.missing.toString() },
        'balance could not cover the full charge; charged what was left',
      );
    }
  }
}
