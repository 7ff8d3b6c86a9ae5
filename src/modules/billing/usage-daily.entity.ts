import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Daily totals per account, model and key, kept by settlement so usage views never scan raw records. */
@Entity('usage_daily')
export class UsageDailyEntity {
  @PrimaryColumn({ name: 'account_id', type: 'uuid' })
  accountId: string;

  /** UTC date. */
  @PrimaryColumn({ type: 'date' })
  day: string;

  @PrimaryColumn({ name: 'model_id', type: 'text' })
  modelId: string;

  @PrimaryColumn({ name: 'key_id', type: 'uuid' })
  keyId: string;

  @Column({ type: 'integer' })
  requests: number;

  @Column({ name: 'prompt_tokens', type: 'bigint', transformer: bigintTransformer })
  promptTokens: bigint;

  @Column({ name: 'completion_tokens', type: 'bigint', transformer: bigintTransformer })
  completionTokens: bigint;

  @Column({ name: 'cached_tokens', type: 'bigint', default: 0, transformer: bigintTransformer })
  cachedTokens: bigint;

  @Column({ name: 'cache_write_tokens', type: 'bigint', default: 0, transformer: bigintTransformer })
  cacheWriteTokens: bigint;

  @Column({ name: 'reasoning_tokens', type: 'bigint', default: 0, transformer: bigintTransformer })
  reasoningTokens: bigint;

  @Column({ type: 'bigint', transformer: bigintTransformer })
  cost: bigint;
}
