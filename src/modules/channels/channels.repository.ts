import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { In, Repository } from 'typeorm';

export type ChannelDeletion =
  { deleted: true } | { deleted: false; routedBy: string[] } | { deleted: false; missing: true };

@Injectable()
export class ChannelsRepository {
  constructor(@InjectRepository(ChannelEntity) private readonly channels: Repository<ChannelEntity>) {}

  async upsert(values: Omit<ChannelEntity, 'createdAt' | 'updatedAt'>): Promise<ChannelEntity> {
    await this.channels.upsert(values, ['id']);
    return this.channels.findOneByOrFail({ id: values.id });
  }

  list(): Promise<ChannelEntity[]> {
    return this.channels.find({ order: { id: 'ASC' } });
  }

  find(id: string): Promise<ChannelEntity | null> {
    return this.channels.findOneBy({ id });
  }

  async existingIds(ids: string[]): Promise<Set<string>> {
    const found = await this.channels.find({ select: { id: true }, where: { id: In(ids) } });
    return new Set(found.map((channel) => channel.id));
  }

  /** Switches the channel off; false when it was off already (so only one caller logs it). */
  async disable(id: string): Promise<boolean> {
    const result = await this.channels.update({ id, enabled: true }, { enabled: false });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Deletes the channel unless an enabled model routes to it; the routes of disabled models go with
   * it. Raw SQL on model_routes and models: the catalog module sits above this one and owns their
   * entities. The channel row is locked first, so a model saved meanwhile cannot slip a route in.
   */
  deleteUnlessRouted(id: string): Promise<ChannelDeletion> {
    return this.channels.manager.transaction(async (manager) => {
      const locked: unknown[] = await manager.query('SELECT id FROM channels WHERE id = $1 FOR UPDATE', [id]);
      if (locked.length === 0) {
        return { deleted: false, missing: true };
      }
      const routed: { id: string }[] = await manager.query(
        `SELECT m.id FROM model_routes r JOIN models m ON m.id = r.model_id
         WHERE r.channel_id = $1 AND m.enabled ORDER BY m.id`,
        [id],
      );
      if (routed.length > 0) {
        return { deleted: false, routedBy: routed.map((row) => row.id) };
      }
      await manager.query('DELETE FROM model_routes WHERE channel_id = $1', [id]);
      await manager.query('DELETE FROM channels WHERE id = $1', [id]);
      return { deleted: true };
    });
  }
}
