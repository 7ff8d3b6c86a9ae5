import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Daily totals per model and channel over all accounts, kept by settlement in the same transaction
 * as usage_daily: what the margin report reads, so it never scans raw usage records.
 */
@Entity('usage_channel_daily')
export class UsageChannelDailyEntity {
  /** UTC date the requests arrived. */
  @PrimaryColumn({ type: 'date' })
  day: string;

  @PrimaryColumn({ name: 'model_id', type: 'text' })
  modelId: string;

  @PrimaryColumn({ name: 'channel_id', type: 'text' })
  channelId: string;

  @Column({ type: 'bigint', transformer: bigintTransformer })
  requests: bigint;

  @Column({ name: 'prompt_tokens', type: 'bigint', transformer: bigintTransformer })
  promptTokens: bigint;

  @Column({ name: 'completion_tokens', type: 'bigint', transformer: bigintTransformer })
  completionTokens: bigint;

  @Column({ name: 'cached_tokens', type: 'bigint', transformer: bigintTransformer })
  cachedTokens: bigint;

  @Column({ name: 'cache_write_tokens', type: 'bigint', transformer: bigintTransformer })
  cacheWriteTokens: bigint;

  /** Nano-dollars charged to the accounts (what usage_daily's cost adds up to). */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  revenue: bigint;

  /** Nano-dollars the upstream charges for the requests whose route had cost prices at settlement. */
  @Column({ name: 'upstream_cost', type: 'bigint', transformer: bigintTransformer })
  upstreamCost: bigint;

  /** Requests whose route had no cost prices: their upstream cost is unknown, never counted as zero. */
  @Column({ name: 'uncosted_requests', type: 'bigint', transformer: bigintTransformer })
  uncostedRequests: bigint;

  /** Of revenue, what those uncosted requests brought: the report leaves it out of any margin. */
  @Column({ name: 'uncosted_revenue', type: 'bigint', transformer: bigintTransformer })
  uncostedRevenue: bigint;
}
