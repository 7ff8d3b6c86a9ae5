import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { groupBy } from 'src/common/collections/group-by';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { LOGGER } from 'src/common/logging/logger';
import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { traced } from 'src/common/telemetry/tracing';
import { SettlementBatchService, SettlementResult } from 'src/modules/billing/settlement-batch.service';
import { isDatabaseUnavailable, isLockTimeout } from 'src/modules/billing/settlement.repository';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { LowBalanceAlerts } from 'src/modules/balance-alerts/low-balance-alerts.service';

/** Usages claimed, and settled in one transaction, at a time. */
const CLAIM_BATCH = 500;
/** Accounts of a failed batch settled at once, each in its own transaction. */
const ACCOUNTS_AT_ONCE = 8;

export interface SettlementReport {
  /** Request ids settled now or found settled before (charged at most once either way). */
  settled: string[];
  /** Request ids whose settlement failed; their usage stays recorded and is tried again. */
  failed: string[];
  /** Those of `failed` that failed because the database was unavailable (not for a reason of their own). */
  unavailable: string[];
}

/** Settles recorded usage in batches, then releases the holds and refreshes the Redis balances. */
@Injectable()
export class SettlementService {
  constructor(
    private readonly batch: SettlementBatchService,
    private readonly usage: UsageQueueService,
    private readonly gate: BalanceGateService,
    private readonly alerts: LowBalanceAlerts,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Claims and settles recorded usage while full batches settle cleanly. A short batch ends the
   * pass: what is recorded after it comes with its own settlement request, and claiming it at once
   * would settle a trickle of tiny batches back to back. A batch with failures ends it too (Postgres
   * may be down: the rest waits rather than failing one by one). What failed is given back to be
   * claimed again within seconds, backing off per attempt (UsageQueueService.retryLater): not a lease
   * later, and never in a tight loop. `retryInMs` says when the first of it may be claimed again.
   */
  async settleRecorded(): Promise<{ settled: number; retryInMs: number | null }> {
    let settled = 0;
    for (;;) {
      const claimed = await this.usage.claimUsage(CLAIM_BATCH, this.config.settlementLeaseMs);
      const payloads = claimed.flatMap((json) => this.parse(json));
      const report = await this.settleTraced(payloads);
      settled += report.settled.length;
      if (report.failed.length > 0) {
        const failed = new Set(report.failed);
        const unavailable = new Set(report.unavailable);
        const retried = payloads
          .filter((payload) => failed.has(payload.requestId))
          .map(({ accountId, requestId }) => ({
            accountId,
            requestId,
            databaseUnavailable: unavailable.has(requestId),
          }));
        return { settled, retryInMs: await this.usage.retryLater(retried, this.config.settlementLeaseMs) };
      }
      if (claimed.length < CLAIM_BATCH) {
        return { settled, retryInMs: null };
      }
    }
  }

  /** A batch claimed, in a span of its own when tracing is on (an empty claim, every few seconds, has none). */
  private settleTraced(payloads: SettleCompletionPayload[]): Promise<SettlementReport> {
    if (payloads.length === 0) {
      return this.settle(payloads);
    }
    return traced('settlement batch', { 'gateway.batch_size': payloads.length }, async (span) => {
      const report = await this.settle(payloads);
      span?.set({ 'gateway.settled': report.settled.length, 'gateway.failed': report.failed.length });
      if (report.failed.length > 0) {
        span?.fail(report.unavailable.length > 0 ? 'database_unavailable' : 'settlement_failed');
      }
      return report;
    });
  }

  /**
   * One transaction for the batch. If it fails: one per account, so a locked or broken account
   * fails alone; within an account, one per payload, so one bad payload fails alone — except when
   * the account's row was locked, which its other payloads would only wait for again.
   */
  async settle(payloads: SettleCompletionPayload[]): Promise<SettlementReport> {
    if (payloads.length === 0) {
      return { settled: [], failed: [], unavailable: [] };
    }
    try {
      await this.apply(payloads);
      return { settled: payloads.map((payload) => payload.requestId), failed: [], unavailable: [] };
    } catch (error) {
      return this.settleApart(payloads, error);
    }
  }

  /** After the batch's transaction failed: the batch apart, in smaller transactions. */
  private async settleApart(payloads: SettleCompletionPayload[], error: unknown): Promise<SettlementReport> {
    const reason = (error as Error).message;
    const requestIds = payloads.map((payload) => payload.requestId);
    if (isDatabaseUnavailable(error)) {
      // Smaller transactions would fail the same way: all of it waits for the retry.
      this.logger.error({ err: reason, size: payloads.length }, 'settlement failed: the database is unavailable');
      return { settled: [], failed: requestIds, unavailable: requestIds };
    }
    if (payloads.length === 1) {
      this.logger.error({ err: reason, reqId: payloads[0].requestId }, 'settlement failed');
      return { settled: [], failed: requestIds, unavailable: [] };
    }
    const accounts = [...groupBy(payloads, (payload) => payload.accountId).values()];
    if (accounts.length > 1) {
      this.logger.warn({ err: reason, size: payloads.length }, 'batch settlement failed; settling account by account');
      const reports: SettlementReport[] = [];
      // A few at a time: a batch of 500 must not take every connection of the pool.
      for (let start = 0; start < accounts.length; start += ACCOUNTS_AT_ONCE) {
        const slice = accounts.slice(start, start + ACCOUNTS_AT_ONCE);
        reports.push(...(await Promise.all(slice.map((group) => this.settle(group)))));
      }
      return merge(reports);
    }
    if (isLockTimeout(error)) {
      this.logger.error(
        { err: reason, accountId: payloads[0].accountId, size: payloads.length },
        'the account or its referrer stayed locked by another transaction; its usage is settled once the claim lapses',
      );
      return { settled: [], failed: requestIds, unavailable: [] };
    }
    this.logger.warn({ err: reason, size: payloads.length }, 'settlement failed; settling one by one');
    // One after another: they all lock the same account row.
    const reports: SettlementReport[] = [];
    for (const payload of payloads) {
      reports.push(await this.settle([payload]));
    }
    return merge(reports);
  }

  private parse(json: string): SettleCompletionPayload[] {
    try {
      return [JSON.parse(json) as SettleCompletionPayload];
    } catch {
      this.logger.error({ size: json.length }, 'unreadable usage record; left for an operator');
      return [];
    }
  }

  private async apply(payloads: SettleCompletionPayload[]): Promise<void> {
    workerMetrics.settlementBatchSize.observe(payloads.length);
    const timer = workerMetrics.settlementBatchSeconds.startTimer();
    try {
      await this.applyTimed(payloads);
      timer({ outcome: 'settled' });
    } catch (error) {
      timer({ outcome: 'failed' });
      throw error;
    }
  }

  private async applyTimed(payloads: SettleCompletionPayload[]): Promise<void> {
    const result = await this.batch.settle(payloads);
    reportSettlement(this.logger, result);
    // After the commit: a crash here leaves holds and records in Redis; once the lease lapses they
    // are claimed again, found settled, charged nothing, and released.
    await this.usage.releaseMany(
      payloads.map((payload) => ({
        accountId: payload.accountId,
        requestId: payload.requestId,
        snapshot: result.snapshots.get(payload.accountId),
        keySpent: spentOf(result.keySpent, payload.keyId),
      })),
    );
    const referrers = [...result.snapshots].filter(([id]) => !payloads.some((payload) => payload.accountId === id));
    await Promise.all(referrers.map(([id, snapshot]) => this.gate.sync(id, snapshot)));
    await this.alerts.checkAfterSettlement(
      result.applied.length > 0 ? [...new Set(payloads.map((p) => p.accountId))] : [],
    );
  }
}

/** What a settlement charged less than asked, or could not charge at all: logged, with ids and amounts only. */
export function reportSettlement(logger: Logger, result: SettlementResult): void {
  for (const requestId of result.unknownAccounts) {
    logger.error({ reqId: requestId }, 'settlement for an unknown account: nothing charged');
  }
  for (const shortfall of result.shortfalls) {
    logger.error(
      { reqId: shortfall.requestId, accountId: shortfall.accountId, missingNanos: shortfall.missing.toString() },
      'balance could not cover the full charge; charged what was left',
    );
  }
}

/** A key's new lifetime spend after a settlement, for its Redis snapshot. */
export function spentOf(keySpent: Map<string, bigint>, keyId: string): { keyId: string; spent: bigint } | undefined {
  const spent = keySpent.get(keyId);
  return spent === undefined ? undefined : { keyId, spent };
}

function merge(reports: SettlementReport[]): SettlementReport {
  return {
    settled: reports.flatMap((r) => r.settled),
    failed: reports.flatMap((r) => r.failed),
    unavailable: reports.flatMap((r) => r.unavailable),
  };
}
