import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { ModelEntity } from 'src/modules/models/model.entity';
import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

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

  @ManyToOne(() => ModelEntity, (model) => model.routes, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'model_id', foreignKeyConstraintName: 'model_routes_model_id_fkey' })
  model?: ModelEntity;

  @ManyToOne(() => ChannelEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'model_routes_channel_id_fkey' })
  channel?: ChannelEntity;
}
