import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

export const USAGE_STATUSES = ['completed', 'client_aborted', 'upstream_broken'] as const;
export type UsageStatus = (typeof USAGE_STATUSES)[number];

/**
 * One billed completion. Counts and money only: request and response content is never stored.
 * Partitioned by month of created_at (migration PartitionBooks, docs/billing.md "Partitioned books").
 */
@Entity('usage_records')
@Check('usage_records_status_check', `"status" IN ('completed', 'client_aborted', 'upstream_broken')`)
@Index('usage_records_account_created_idx', ['accountId', 'createdAt', 'requestId'])
@Index('usage_records_account_model_created_idx', ['accountId', 'modelId', 'createdAt'])
@Index('usage_records_account_key_created_idx', ['accountId', 'keyId', 'createdAt'])
// The request log's (GET /admin/requests): each filter, then the page order.
@Index('usage_records_created_idx', ['createdAt', 'requestId'])
@Index('usage_records_model_created_idx', ['modelId', 'createdAt', 'requestId'])
@Index('usage_records_channel_created_idx', ['channelId', 'createdAt', 'requestId'])
@Index('usage_records_status_created_idx', ['status', 'createdAt', 'requestId'])
@Index('usage_records_client_request_idx', ['clientRequestId', 'createdAt'], {
  where: '"client_request_id" IS NOT NULL',
})
export class UsageRecordEntity {
  /**
   * The x-request-id of the completion; the primary key makes settlement idempotent. It includes
   * created_at because the table is partitioned by it; created_at is fixed per request id (the API's
   * receipt time, carried unchanged through retries), so the pair is unique exactly when the id is.
   */
  @PrimaryColumn({ name: 'request_id', type: 'text', primaryKeyConstraintName: 'usage_records_pkey' })
  requestId: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @Column({ name: 'key_id', type: 'uuid' })
  keyId: string;

  @Column({ name: 'model_id', type: 'text' })
  modelId: string;

  @Column({ name: 'channel_id', type: 'text' })
  channelId: string;

  @Column({ name: 'prompt_tokens', type: 'integer' })
  promptTokens: number;

  @Column({ name: 'completion_tokens', type: 'integer' })
  completionTokens: number;

  /** Of the prompt tokens, those read from the upstream's cache (billed at the cached price). */
  @Column({ name: 'cached_tokens', type: 'integer', default: 0 })
  cachedTokens: number;

  /** Of the prompt tokens, those written to the upstream's cache (billed at the cache-write price). */
  @Column({ name: 'cache_write_tokens', type: 'integer', default: 0 })
  cacheWriteTokens: number;

  /** Of the completion tokens, those spent reasoning (billed as completion tokens). */
  @Column({ name: 'reasoning_tokens', type: 'integer', default: 0 })
  reasoningTokens: number;

  /** Nano-dollars the usage costs at the request's prices. */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  cost: bigint;

  /** Nano-dollars actually debited (less than cost only if the balance could not cover it). */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  charged: bigint;

  /** `upstream` when the provider reported usage, `estimated` when the gateway counted with its tokenizer. */
  @Column({ name: 'usage_source', type: 'text' })
  usageSource: 'upstream' | 'estimated';

  @Column({ type: 'text' })
  status: UsageStatus;

  @Column({ name: 'upstream_latency_ms', type: 'integer' })
  upstreamLatencyMs: number;

  /** The client's own X-Request-Id when it sent a valid one (support searches by it); never the bill's key. */
  @Column({ name: 'client_request_id', type: 'text', nullable: true })
  clientRequestId: string | null;

  /** The provider's request id for the attempt that answered (x-request-id, request-id, …), when it sent one. */
  @Column({ name: 'provider_request_id', type: 'text', nullable: true })
  providerRequestId: string | null;

  /** Milliseconds from sending the upstream request to its first byte; NULL on rows written before it was kept. */
  @Column({ name: 'first_byte_ms', type: 'integer', nullable: true })
  firstByteMs: number | null;

  /** When the request was made (not when it settled); the partition key. */
  @PrimaryColumn({ name: 'created_at', type: 'timestamptz', primaryKeyConstraintName: 'usage_records_pkey' })
  createdAt: Date;
}
