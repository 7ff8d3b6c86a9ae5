import { Module } from '@nestjs/common';
import { ChannelsModule } from 'src/modules/channels/channels.module';
import { RelayModule } from 'src/modules/relay/relay.module';
import { MessageTokenCounter } from 'src/modules/messages/message-token-counter.service';
import { MessagesController } from 'src/modules/messages/messages.controller';
import { MessagesService } from 'src/modules/messages/messages.service';
import { ModelsModule } from 'src/modules/models/models.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

@Module({
  imports: [RelayModule, ModelsModule, ChannelsModule, RateLimitsModule],
  controllers: [MessagesController],
  providers: [MessagesService, MessageTokenCounter],
})
export class MessagesModule {}
