import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { In, Repository } from 'typeorm';

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

  async existingIds(ids: string[]): Promise<Set<string>> {
    const found = await this.channels.find({ select: { id: true }, where: { id: In(ids) } });
    return new Set(found.map((channel) => channel.id));
  }
}
