import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { Check, Column, CreateDateColumn, Entity, OneToMany, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * What a model serves: chat completions, embeddings, or legacy text completions (OpenAI-compatible
 * upstreams only). A request to another route is refused.
 */
export const MODEL_KINDS = ['chat', 'embedding', 'completion'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/** How a 400 names a model of each kind. */
export const MODEL_KIND_NAMES: Record<ModelKind, string> = {
  chat: 'a chat model',
  embedding: 'an embedding model',
  completion: 'a legacy completion model',
};

/** The route each kind answers, for the 400 that sends a client to the right one. */
export const MODEL_KIND_ROUTES: Record<ModelKind, string> = {
  chat: 'POST /v1/chat/completions',
  embedding: 'POST /v1/embeddings',
  completion: 'POST /v1/completions',
};

@Entity('models')
@Check('models_kind_check', `"kind" IN ('chat', 'embedding', 'completion')`)
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
