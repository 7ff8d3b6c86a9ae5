import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { Check, Column, CreateDateColumn, Entity, OneToMany, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** What a model serves: chat completions, or embeddings. A request to the other route is refused. */
export const MODEL_KINDS = ['chat', 'embedding'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

@Entity('models')
@Check('models_kind_check', `"kind" IN ('chat', 'embedding')`)
export class ModelEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  /** Nano-dollars per one million prompt tokens. */
  @Column({ name: 'input_price', type: 'bigint', transformer: bigintTransformer })
  inputPrice: bigint;

  /** Nano-dollars per one million completion tokens. */
  @Column({ name: 'output_price', type: 'bigint', transformer: bigintTransformer })
  outputPrice: bigint;

  /** Nano-dollars per one million prompt tokens read from the upstream's cache; null: the input price. */
  @Column({ name: 'cached_input_price', type: 'bigint', nullable: true, transformer: bigintTransformer })
  cachedInputPrice: bigint | null;

  /** Nano-dollars per one million prompt tokens written to the upstream's cache; null: the input price. */
  @Column({ name: 'cache_write_input_price', type: 'bigint', nullable: true, transformer: bigintTransformer })
  cacheWriteInputPrice: bigint | null;

  @Column({ name: 'max_output_tokens', type: 'integer' })
  maxOutputTokens: number;

  @Column({ type: 'boolean', default: false })
  vision: boolean;

  @Column({ type: 'text', default: 'chat' })
  kind: ModelKind;

  /** Requests per minute, per account. */
  @Column({ type: 'integer' })
  rpm: number;

  /** Tokens per minute, per account. */
  @Column({ type: 'integer' })
  tpm: number;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @OneToMany(() => ModelRouteEntity, (route) => route.model, { cascade: true })
  routes?: ModelRouteEntity[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
