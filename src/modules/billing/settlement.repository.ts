import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { referralEffectiveAt } from 'src/modules/accounts/referral-effective';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { ChannelDailyTotal, routeKey, RouteCosts } from 'src/modules/billing/channel-daily-totals';
import { Charge } from 'src/modules/billing/settlement-charges';
import { UsageDailyTotal } from 'src/modules/billing/usage-daily-totals';
import { BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { DataSource, EntityManager } from 'typeorm';

/**
 * Settlement's queries. They run in the one transaction of a batch (SettlementBatchService), so
 * usage records, ledger entries, balances and daily rollups move together or not at all.
 */
@Injectable()
export class SettlementRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in one transaction. `lockTimeoutMs` bounds the wait for another transaction's row
   * locks (an operator's open session, say): past it the transaction fails with `isLockTimeout`,
   * instead of holding a worker slot until the usage's lease lapses and a second worker blocks on
   * the same row.
   */
  inTransaction<T>(lockTimeoutMs: number, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
      return work(manager);
    });
  }

  /** Each account's referrer (null without one); accounts that do not exist are left out. */
  async findReferrers(manager: EntityManager, accountIds: string[]): Promise<Map<string, string | null>> {
    // referred_by never changes after registration, so it can be read before taking locks. A
    // referral takes effect once the invitee verified its e-mail or paid a top-up: until then, no
    // credit (whatever REQUIRE_EMAIL_VERIFICATION says), so an address nobody reads, on an account
    // nobody paid into, cannot earn its own rebate.
    const rows = await manager.query<{ id: string; referred_by: string | null }[]>(
      `SELECT id, CASE WHEN ${referralEffectiveAt('accounts')} IS NOT NULL THEN referred_by END AS referred_by
       FROM accounts WHERE id = ANY($1::uuid[])`,
      [accountIds],
    );
    return new Map(rows.map((row) => [row.id, row.referred_by]));
  }

  /**
   * The request ids that have a usage record already: settled before, so charged nothing again.
   * Each usage probes the primary key (request id and arrival time, the record's `created_at`) once,
   * in a lateral subquery the planner cannot turn into a join over the partition, so the plan does
   * not depend on the table's statistics. As `request_id = ANY(...)` it was planned as a scan of the
   * month's whole partition whenever they were missing (before the partition's first ANALYZE, or with
   * autovacuum off): a cost growing with every usage settled that month, paid by every batch
   * (docs/performance.md, "Settlement's Redis and Postgres work").
   */
  async findSettled(
    manager: EntityManager,
    usages: Pick<SettleCompletionPayload, 'requestId' | 'createdAt'>[],
  ): Promise<Set<string>> {
    const rows = await manager.query<{ request_id: string }[]>(
      `SELECT wanted.request_id
       FROM unnest($1::text[], $2::timestamptz[]) AS wanted(request_id, created_at)
       CROSS JOIN LATERAL (
         SELECT FROM usage_records u WHERE u.request_id = wanted.request_id AND u.created_at = wanted.created_at LIMIT 1
       ) AS found`,
      [usages.map((usage) => usage.requestId), usages.map((usage) => usage.createdAt)],
    );
    return new Set(rows.map((row) => row.request_id));
  }

  /**
   * Of `requestIds`, those settled already, each with its account's balance now: what closing a
   * hold whose usage was settled without Redis (the API's fallback) pushes to the snapshot.
   */
  async settledWithBalances(requestIds: string[]): Promise<Map<string, BalanceSnapshot>> {
    const rows = await this.dataSource.query<{ request_id: string; balance: string; balance_version: string }[]>(
      `SELECT u.request_id, a.balance, a.balance_version
       FROM usage_records u JOIN accounts a ON a.id = u.account_id
       WHERE u.request_id = ANY($1::text[])`,
      [requestIds],
    );
    return new Map(
      rows.map((row) => [row.request_id, { balance: BigInt(row.balance), version: BigInt(row.balance_version) }]),
    );
  }

  async insertUsageRecords(
    manager: EntityManager,
    payloads: SettleCompletionPayload[],
    charges: Map<string, Charge>,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO usage_records (request_id, account_id, key_id, model_id, channel_id, prompt_tokens, completion_tokens,
         cached_tokens, cache_write_tokens, reasoning_tokens, cost, charged, usage_source, status, upstream_latency_ms,
         created_at, client_request_id, provider_request_id, first_byte_ms)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::int[],
         $8::int[], $9::int[], $10::int[], $11::bigint[], $12::bigint[], $13::text[], $14::text[], $15::int[],
         $16::timestamptz[], $17::text[], $18::text[], $19::int[])`,
      [
        payloads.map((p) => p.requestId),
        payloads.map((p) => p.accountId),
        payloads.map((p) => p.keyId),
        payloads.map((p) => p.modelId),
        payloads.map((p) => p.channelId),
        payloads.map((p) => p.promptTokens),
        payloads.map((p) => p.completionTokens),
        payloads.map((p) => p.cachedTokens ?? 0),
        payloads.map((p) => p.cacheWriteTokens ?? 0),
        payloads.map((p) => p.reasoningTokens ?? 0),
        payloads.map((p) => charges.get(p.requestId)!.cost.toString()),
        payloads.map((p) => charges.get(p.requestId)!.charged.toString()),
        payloads.map((p) => p.usageSource),
        payloads.map((p) => p.status),
        payloads.map((p) => p.upstreamLatencyMs),
        payloads.map((p) => p.createdAt),
        payloads.map((p) => p.clientRequestId ?? null),
        payloads.map((p) => p.providerRequestId ?? null),
        payloads.map((p) => p.firstByteMs ?? null),
      ],
    );
  }

  /** The cost prices, now, of the routes (model, channel) that have them; routes without are left out. */
  async findRouteCosts(manager: EntityManager, routes: { modelId: string; channelId: string }[]): Promise<RouteCosts> {
    const rows = await manager.query<
      {
        model_id: string;
        channel_id: string;
        cost_input_price: string;
        cost_output_price: string;
        cost_cached_input_price: string | null;
        cost_cache_write_input_price: string | null;
      }[]
    >(
      `SELECT r.model_id, r.channel_id, r.cost_input_price, r.cost_output_price, r.cost_cached_input_price,
         r.cost_cache_write_input_price
       FROM model_routes r JOIN unnest($1::text[], $2::text[]) AS wanted(model_id, channel_id)
         ON r.model_id = wanted.model_id AND r.channel_id = wanted.channel_id
       WHERE r.cost_input_price IS NOT NULL AND r.cost_output_price IS NOT NULL`,
      [routes.map((route) => route.modelId), routes.map((route) => route.channelId)],
    );
    return new Map(
      rows.map((row) => [
        routeKey(row.model_id, row.channel_id),
        {
          inputPrice: BigInt(row.cost_input_price),
          outputPrice: BigInt(row.cost_output_price),
          cachedInputPrice: price(row.cost_cached_input_price),
          cacheWriteInputPrice: price(row.cost_cache_write_input_price),
        },
      ]),
    );
  }

  /**
   * Adds the totals to the per-channel rollup the margin report reads. Called only for usage inserted
   * in the same transaction (like addUsageDaily), so a retried batch never counts twice.
   */
  async addChannelDaily(manager: EntityManager, totals: ChannelDailyTotal[]): Promise<void> {
    const column = (pick: (total: ChannelDailyTotal) => bigint) => totals.map((total) => pick(total).toString());
    await manager.query(
      `INSERT INTO usage_channel_daily (day, model_id, channel_id, requests, prompt_tokens, completion_tokens,
         cached_tokens, cache_write_tokens, revenue, upstream_cost, uncosted_requests, uncosted_revenue)
       SELECT * FROM unnest($1::date[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[],
         $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])
       ON CONFLICT (day, model_id, channel_id) DO UPDATE SET
         requests = usage_channel_daily.requests + EXCLUDED.requests,
         prompt_tokens = usage_channel_daily.prompt_tokens + EXCLUDED.prompt_tokens,
         completion_tokens = usage_channel_daily.completion_tokens + EXCLUDED.completion_tokens,
         cached_tokens = usage_channel_daily.cached_tokens + EXCLUDED.cached_tokens,
         cache_write_tokens = usage_channel_daily.cache_write_tokens + EXCLUDED.cache_write_tokens,
         revenue = usage_channel_daily.revenue + EXCLUDED.revenue,
         upstream_cost = usage_channel_daily.upstream_cost + EXCLUDED.upstream_cost,
         uncosted_requests = usage_channel_daily.uncosted_requests + EXCLUDED.uncosted_requests,
         uncosted_revenue = usage_channel_daily.uncosted_revenue + EXCLUDED.uncosted_revenue`,
      [
        totals.map((total) => total.day),
        totals.map((total) => total.modelId),
        totals.map((total) => total.channelId),
        column((total) => total.requests),
        column((total) => total.prompt),
        column((total) => total.completion),
        column((total) => total.cached),
        column((total) => total.cacheWrite),
        column((total) => total.revenue),
        column((total) => total.upstreamCost),
        column((total) => total.uncostedRequests),
        column((total) => total.uncostedRevenue),
      ],
    );
  }

  /** Adds the totals to the daily rollup the console's usage view reads. */
  async addUsageDaily(manager: EntityManager, totals: UsageDailyTotal[]): Promise<void> {
    await manager.query(
      `INSERT INTO usage_daily (account_id, day, model_id, key_id, requests, prompt_tokens, completion_tokens,
         cached_tokens, cache_write_tokens, reasoning_tokens, cost)
       SELECT * FROM unnest($1::uuid[], $2::date[], $3::text[], $4::uuid[], $5::int[], $6::bigint[], $7::bigint[],
         $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
       ON CONFLICT (account_id, day, model_id, key_id) DO UPDATE SET
         requests = usage_daily.requests + EXCLUDED.requests,
         prompt_tokens = usage_daily.prompt_tokens + EXCLUDED.prompt_tokens,
         completion_tokens = usage_daily.completion_tokens + EXCLUDED.completion_tokens,
         cached_tokens = usage_daily.cached_tokens + EXCLUDED.cached_tokens,
         cache_write_tokens = usage_daily.cache_write_tokens + EXCLUDED.cache_write_tokens,
         reasoning_tokens = usage_daily.reasoning_tokens + EXCLUDED.reasoning_tokens,
         cost = usage_daily.cost + EXCLUDED.cost`,
      [
        totals.map((total) => total.accountId),
        totals.map((total) => total.day),
        totals.map((total) => total.modelId),
        totals.map((total) => total.keyId),
        totals.map((total) => total.requests),
        totals.map((total) => total.prompt.toString()),
        totals.map((total) => total.completion.toString()),
        totals.map((total) => total.cached.toString()),
        totals.map((total) => total.cacheWrite.toString()),
        totals.map((total) => total.reasoning.toString()),
        totals.map((total) => total.cost.toString()),
      ],
    );
  }
}

/** A cost price column: null stays null (unknown, or the input price for the cache prices). */
const price = (value: string | null) => (value === null ? null : BigInt(value));

/** Postgres gave up waiting for a row lock (SQLSTATE 55P03, `lock_not_available`). */
export function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '55P03';
}

// Moved to common: the HTTP error filter answers 503 on the same errors.
export { isDatabaseUnavailable } from 'src/common/database/database-errors';
