import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminChannelsController } from 'src/modules/channels/admin-channels.controller';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import { ChannelsService } from 'src/modules/channels/channels.service';
import { ChannelBreaker } from 'src/modules/channels/health/channel-breaker.service';

@Module({
  imports: [TypeOrmModule.forFeature([ChannelEntity])],
  controllers: [AdminChannelsController],
  providers: [ChannelsRepository, ChannelsService, ChannelBreaker],
  exports: [ChannelsRepository, ChannelBreaker],
})
export class ChannelsModule {}
