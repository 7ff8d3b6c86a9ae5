import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { referralCredit, usageCost } from 'src/modules/billing/pricing';
import { DataSource, EntityManager } from 'typeorm';

export interface SettlementResult {
  /** Requests charged now (the rest were settled before: a retry or a duplicate). */
  applied: string[];
  /** Jobs whose account does not exist (nothing to charge; logged by the caller). */
  unknownAccounts: string[];
  /** Charges the balance could not cover in full, in nano-dollars per request (should stay empty). */
  shortfalls: { requestId: string; accountId: string; missing: bigint }[];
  /** Balance and version of every account touched or locked, for the Redis admission snapshot. */
  snapshots: Map<string, BalanceSnapshot>;
}

interface LedgerRow {
  accountId: string;
  kind: 'usage' | 'referral_credit';
  amount: bigint;
  balanceAfter: bigint;
  reference: string;
}

/**
 * Settles a batch of completions in ONE transaction: usage records, usage and referral ledger
 * entries, balances and daily rollups move together or not at all. Usage records are keyed by
 * request id, so a retried or duplicated job finds its record and charges nothing twice.
 */
@Injectable()
export class SettlementRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * `lockTimeoutMs` bounds the wait for another transaction's row locks (an operator's open
   * session, say): past it the transaction fails with `isLockTimeout`, instead of holding a worker
   * slot until the usage's lease lapses and a second worker blocks on the same row.
   */
  settle(payloads: SettleCompletionPayload[], sharePercent: number, lockTimeoutMs: number): Promise<SettlementResult> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
      return this.settleIn(manager, dedupe(payloads), sharePercent);
    });
  }

  private async settleIn(
    manager: EntityManager,
    payloads: SettleCompletionPayload[],
    sharePercent: number,
  ): Promise<SettlementResult> {
    const invitees = [...new Set(payloads.map((payload) => payload.accountId))];
    // referred_by never changes after registration, so it can be read before taking locks.
    const links = await manager.query<{ id: string; referred_by: string | null }[]>(
      'SELECT id, referred_by FROM accounts WHERE id = ANY($1::uuid[])',
      [invitees],
    );
    const referrerOf = new Map(links.map((row) => [row.id, row.referred_by]));
    const involved = [...new Set([...invitees, ...links.flatMap((row) => (row.referred_by ? [row.referred_by] : []))])];
    // Locks in id order, so concurrent batches can never deadlock on each other.
    const locked = await manager.query<{ id: string; balance: string; balance_version: string }[]>(
      'SELECT id, balance, balance_version FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
      [involved],
    );
    const balances = new Map(locked.map((row) => [row.id, BigInt(row.balance)]));
    const versions = new Map(locked.map((row) => [row.id, BigInt(row.balance_version)]));
    const settledBefore = await manager.query<{ request_id: string }[]>(
      'SELECT request_id FROM usage_records WHERE request_id = ANY($1::text[])',
      [payloads.map((payload) => payload.requestId)],
    );
    const done = new Set(settledBefore.map((row) => row.request_id));
    const fresh = payloads.filter((payload) => !done.has(payload.requestId) && balances.has(payload.accountId));

    const ledger: LedgerRow[] = [];
    const charged = new Map<string, bigint>();
    const shortfalls: SettlementResult['shortfalls'] = [];
    const post = (accountId: string, kind: LedgerRow['kind'], amount: bigint, reference: string) => {
      const balanceAfter = balances.get(accountId)! + amount;
      balances.set(accountId, balanceAfter);
      versions.set(accountId, versions.get(accountId)! + 1n);
      ledger.push({ accountId, kind, amount, balanceAfter, reference });
    };
    for (const payload of fresh) {
      const cost = usageCost(
        { inputPrice: BigInt(payload.inputPrice), outputPrice: BigInt(payload.outputPrice) },
        payload.promptTokens,
        payload.completionTokens,
      );
      // The hold made sure the balance covered this; only an operator's debit in between can make it short.
      const available = balances.get(payload.accountId)!;
      const charge = cost <= available ? cost : available;
      charged.set(payload.requestId, charge);
      if (charge < cost) {
        shortfalls.push({ requestId: payload.requestId, accountId: payload.accountId, missing: cost - charge });
      }
      if (charge > 0n) {
        post(payload.accountId, 'usage', -charge, payload.requestId);
      }
      const referrer = referrerOf.get(payload.accountId);
      const credit = referrer ? referralCredit(charge, sharePercent) : 0n;
      if (referrer && credit > 0n && balances.has(referrer)) {
        post(referrer, 'referral_credit', credit, payload.requestId);
      }
    }
    if (fresh.length > 0) {
      await insertUsageRecords(manager, fresh, charged);
      await insertLedgerEntries(manager, ledger);
      await updateBalances(manager, ledger, balances, versions);
      await upsertDailyUsage(manager, fresh, charged);
    }
    const snapshots = new Map([...balances].map(([id, balance]) => [id, { balance, version: versions.get(id)! }]));
    const unknownAccounts = payloads.filter((p) => !balances.has(p.accountId)).map((p) => p.requestId);
    return { applied: fresh.map((payload) => payload.requestId), unknownAccounts, shortfalls, snapshots };
  }
}

function dedupe(payloads: SettleCompletionPayload[]): SettleCompletionPayload[] {
  return [...new Map(payloads.map((payload) => [payload.requestId, payload])).values()];
}

async function insertUsageRecords(
  manager: EntityManager,
  payloads: SettleCompletionPayload[],
  charged: Map<string, bigint>,
): Promise<void> {
  const cost = (payload: SettleCompletionPayload) =>
    usageCost(
      { inputPrice: BigInt(payload.inputPrice), outputPrice: BigInt(payload.outputPrice) },
      payload.promptTokens,
      payload.completionTokens,
    ).toString();
  await manager.query(
    `INSERT INTO usage_records (request_id, account_id, key_id, model_id, channel_id, prompt_tokens, completion_tokens,
       cost, charged, usage_source, status, upstream_latency_ms, created_at)
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::int[],
       $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::int[], $13::timestamptz[])`,
    [
      payloads.map((p) => p.requestId),
      payloads.map((p) => p.accountId),
      payloads.map((p) => p.keyId),
      payloads.map((p) => p.modelId),
      payloads.map((p) => p.channelId),
      payloads.map((p) => p.promptTokens),
      payloads.map((p) => p.completionTokens),
      payloads.map(cost),
      payloads.map((p) => charged.get(p.requestId)!.toString()),
      payloads.map((p) => p.usageSource),
      payloads.map((p) => p.status),
      payloads.map((p) => p.upstreamLatencyMs),
      payloads.map((p) => p.createdAt),
    ],
  );
}

async function insertLedgerEntries(manager: EntityManager, rows: LedgerRow[]): Promise<void> {
  if (rows.length === 0) {
    return;
  }
  // clock_timestamp() plus the row's position keeps entries of one batch in the order they were applied.
  await manager.query(
    `INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, created_at)
     SELECT account_id, kind, amount, balance_after, reference, clock_timestamp() + (ord * interval '1 microsecond')
     FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::bigint[], $5::text[]) WITH ORDINALITY
       AS t(account_id, kind, amount, balance_after, reference, ord)`,
    [
      rows.map((row) => row.accountId),
      rows.map((row) => row.kind),
      rows.map((row) => row.amount.toString()),
      rows.map((row) => row.balanceAfter.toString()),
      rows.map((row) => row.reference),
    ],
  );
}

async function updateBalances(
  manager: EntityManager,
  rows: LedgerRow[],
  balances: Map<string, bigint>,
  versions: Map<string, bigint>,
): Promise<void> {
  const changed = [...new Set(rows.map((row) => row.accountId))];
  if (changed.length === 0) {
    return;
  }
  await manager.query(
    `UPDATE accounts SET balance = t.balance, balance_version = t.version
     FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS t(id, balance, version)
     WHERE accounts.id = t.id`,
    [changed, changed.map((id) => balances.get(id)!.toString()), changed.map((id) => versions.get(id)!.toString())],
  );
}

async function upsertDailyUsage(
  manager: EntityManager,
  payloads: SettleCompletionPayload[],
  charged: Map<string, bigint>,
): Promise<void> {
  const totals = new Map<
    string,
    {
      accountId: string;
      day: string;
      modelId: string;
      keyId: string;
      requests: number;
      prompt: bigint;
      completion: bigint;
      cost: bigint;
    }
  >();
  for (const payload of payloads) {
    const day = payload.createdAt.slice(0, 10);
    const key = [payload.accountId, day, payload.modelId, payload.keyId].join('|');
    const total = totals.get(key) ?? {
      accountId: payload.accountId,
      day,
      modelId: payload.modelId,
      keyId: payload.keyId,
      requests: 0,
      prompt: 0n,
      completion: 0n,
      cost: 0n,
    };
    total.requests += 1;
    total.prompt += BigInt(payload.promptTokens);
    total.completion += BigInt(payload.completionTokens);
    total.cost += charged.get(payload.requestId)!;
    totals.set(key, total);
  }
  const rows = [...totals.values()];
  await manager.query(
    `INSERT INTO usage_daily (account_id, day, model_id, key_id, requests, prompt_tokens, completion_tokens, cost)
     SELECT * FROM unnest($1::uuid[], $2::date[], $3::text[], $4::uuid[], $5::int[], $6::bigint[], $7::bigint[], $8::bigint[])
     ON CONFLICT (account_id, day, model_id, key_id) DO UPDATE SET
       requests = usage_daily.requests + EXCLUDED.requests,
       prompt_tokens = usage_daily.prompt_tokens + EXCLUDED.prompt_tokens,
       completion_tokens = usage_daily.completion_tokens + EXCLUDED.completion_tokens,
       cost = usage_daily.cost + EXCLUDED.cost`,
    [
      rows.map((row) => row.accountId),
      rows.map((row) => row.day),
      rows.map((row) => row.modelId),
      rows.map((row) => row.keyId),
      rows.map((row) => row.requests),
      rows.map((row) => row.prompt.toString()),
      rows.map((row) => row.completion.toString()),
      rows.map((row) => row.cost.toString()),
    ],
  );
}

/** Postgres gave up waiting for a row lock (SQLSTATE 55P03, `lock_not_available`). */
export function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '55P03';
}

/** Node's network errors: Postgres cannot be reached at all. */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * Postgres is unreachable or refuses work (connection exceptions, class 08; shutdown or not
 * accepting connections, 57P0x; too many connections, 53300), as opposed to one statement failing.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (NETWORK_ERRORS.has(code) || /^(08|57P0)/.test(code) || code === '53300')) {
    return true;
  }
  const message = (error as Error | null)?.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(message);
}
