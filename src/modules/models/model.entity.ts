import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { Column, CreateDateColumn, Entity, OneToMany, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('models')
export class ModelEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  /** Nano-dollars per one million prompt tokens. */
  @Column({ name: 'input_price', type: 'bigint', transformer: bigintTransformer })
  inputPrice: bigint;

  /** Nano-dollars per one million completion tokens. */
  @Column({ name: 'output_price', type: 'bigint', transformer: bigintTransformer })
  outputPrice: bigint;

  @Column({ name: 'max_output_tokens', type: 'integer' })
  maxOutputTokens: number;

  @Column({ type: 'boolean', default: false })
  vision: boolean;

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
