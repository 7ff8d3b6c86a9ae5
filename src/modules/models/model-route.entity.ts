import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import type { ModelEntity } from 'src/modules/models/model.entity';
import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Relation } from 'typeorm';

/** One way to serve a model: a channel and the model's name at that upstream. */
@Entity('model_routes')
export class ModelRouteEntity {
  @PrimaryColumn({ name: 'model_id', type: 'text' })
  modelId: string;

  @PrimaryColumn({ name: 'channel_id', type: 'text' })
  channelId: string;

  @Column({ name: 'upstream_model', type: 'text' })
  upstreamModel: string;

  /** Order as given by the operator (the `routes` array index). */
  @Column({ type: 'integer' })
  position: number;

  // What the upstream charges us through this route, nano-dollars per million tokens (like the model's
  // prices): settlement rolls it up for the margin report. Null input/output price: the cost is unknown.
  @Column({ name: 'cost_input_price', type: 'bigint', nullable: true, transformer: bigintTransformer })
  costInputPrice: bigint | null;

  @Column({ name: 'cost_output_price', type: 'bigint', nullable: true, transformer: bigintTransformer })
  costOutputPrice: bigint | null;

  /** Null: cached prompt tokens cost costInputPrice. */
  @Column({ name: 'cost_cached_input_price', type: 'bigint', nullable: true, transformer: bigintTransformer })
  costCachedInputPrice: bigint | null;

  /** Null: cache writes cost costInputPrice. */
  @Column({ name: 'cost_cache_write_input_price', type: 'bigint', nullable: true, transformer: bigintTransformer })
  costCacheWriteInputPrice: bigint | null;

  // Named, not imported: model.entity.ts imports this file for its `routes`, and a value import back would
  // make the two files load each other.
  @ManyToOne('ModelEntity', 'routes', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'model_id', foreignKeyConstraintName: 'model_routes_model_id_fkey' })
  // Relation<>: its design-type metadata must not read ModelEntity, which imports this file (a cycle
  // that a transpiler with live-binding exports, SWC in the tests, would trip on while loading).
  model?: Relation<ModelEntity>;

  @ManyToOne(() => ChannelEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'model_routes_channel_id_fkey' })
  channel?: ChannelEntity;
}
