import { Inject, Injectable } from '@nestjs/common';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { channelDailyTotals } from 'src/modules/billing/channel-daily-totals';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { Charge, settlementCharges, Shortfall } from 'src/modules/billing/settlement-charges';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { usageDailyTotals } from 'src/modules/billing/usage-daily-totals';
import { BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { LedgerPosting, LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { EntityManager } from 'typeorm';

export interface SettlementResult {
  /** Requests charged now (the rest were settled before: a retry or a duplicate). */
  applied: string[];
  /** Jobs whose account does not exist (nothing to charge; logged by the caller). */
  unknownAccounts: string[];
  /** Charges the balance could not cover in full, in nano-dollars per request (should stay empty). */
  shortfalls: Shortfall[];
  /** Balance and version of every account touched or locked, for the Redis admission snapshot. */
  snapshots: Map<string, BalanceSnapshot>;
  /** Every key of the batch (settled now or before) and its spent after, for the Redis key snapshots. */
  keySpent: Map<string, bigint>;
}

/**
 * Settles a batch of completions in ONE transaction: usage records, usage and referral ledger
 * entries, balances and daily rollups move together or not at all. Usage records are keyed by
 * request id, so a retried or duplicated job finds its record and charges nothing twice.
 */
@Injectable()
export class SettlementBatchService {
  constructor(
    private readonly repository: SettlementRepository,
    private readonly ledger: LedgerRepository,
    private readonly keySpend: KeySpendRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  settle(payloads: SettleCompletionPayload[]): Promise<SettlementResult> {
    // A tenth of the lease: a blocked transaction gives up long before its claim lapses.
    const lockTimeoutMs = this.config.settlementLeaseMs / 10;
    return this.repository.inTransaction(lockTimeoutMs, (manager) => this.settleIn(manager, dedupe(payloads)));
  }

  private async settleIn(manager: EntityManager, payloads: SettleCompletionPayload[]): Promise<SettlementResult> {
    const { referrerOf, snapshots, fresh } = await this.lockAndRead(manager, payloads);
    const balances = new Map([...snapshots].map(([id, snapshot]) => [id, snapshot.balance]));
    const { postings, charges, shortfalls } = settlementCharges(
      fresh,
      balances,
      referrerOf,
      this.config.referralSharePercent,
    );
    if (fresh.length > 0) {
      await this.repository.insertUsageRecords(manager, fresh, charges);
      const moved = await this.post(manager, postings);
      moved.forEach((snapshot, accountId) => snapshots.set(accountId, snapshot));
      await this.repository.addUsageDaily(manager, usageDailyTotals(fresh, charges));
      const costs = await this.repository.findRouteCosts(manager, fresh);
      await this.repository.addChannelDaily(manager, channelDailyTotals(fresh, charges, costs));
    }
    const keySpent = await this.keySpend.addSpent(manager, chargesByKey(payloads, fresh, charges));
    const unknownAccounts = payloads.filter((p) => !snapshots.has(p.accountId)).map((p) => p.requestId);
    return { applied: fresh.map((payload) => payload.requestId), unknownAccounts, shortfalls, snapshots, keySpent };
  }

  /**
   * Locks the payers and their referrers and reads their balances; `fresh` are the payloads not
   * settled before whose account exists.
   */
  private async lockAndRead(manager: EntityManager, payloads: SettleCompletionPayload[]) {
    const referrerOf = await this.repository.findReferrers(manager, [...new Set(payloads.map((p) => p.accountId))]);
    const referrers = [...referrerOf.values()].filter((id): id is string => id !== null);
    // Locks in id order, so concurrent batches can never deadlock on each other.
    const snapshots = await this.ledger.lockBalances(manager, [...new Set([...referrerOf.keys(), ...referrers])]);
    const done = await this.repository.findSettled(manager, payloads);
    const fresh = payloads.filter((payload) => !done.has(payload.requestId) && snapshots.has(payload.accountId));
    return { referrerOf, snapshots, fresh };
  }

  /** Posts the batch's entries; returns the balances they moved. */
  private async post(manager: EntityManager, postings: LedgerPosting[]): Promise<Map<string, BalanceSnapshot>> {
    const { balances, refused } = await this.ledger.postMany(manager, postings);
    if (refused.size > 0) {
      // The rows are locked and the charges fit the balances read under that lock: a bug, or the
      // books changed under the lock. Nothing of the batch may commit.
      const [index, why] = [...refused][0];
      throw new Error(
        `the ledger refused ${refused.size} settlement postings, first ${postings[index].reference}: ${why.outcome}`,
      );
    }
    return balances;
  }
}

/** What each key of the batch was charged now: what the balance covered, 0 for usage settled before. */
function chargesByKey(
  payloads: SettleCompletionPayload[],
  fresh: SettleCompletionPayload[],
  charges: Map<string, Charge>,
): Map<string, bigint> {
  const byKey = new Map(payloads.map((payload) => [payload.keyId, 0n]));
  for (const payload of fresh) {
    byKey.set(payload.keyId, byKey.get(payload.keyId)! + charges.get(payload.requestId)!.charged);
  }
  return byKey;
}

function dedupe(payloads: SettleCompletionPayload[]): SettleCompletionPayload[] {
  return [...new Map(payloads.map((payload) => [payload.requestId, payload])).values()];
}
