import { AdminChannelTestController } from 'src/modules/relay/channel-test/admin-channel-test.controller';
import { ChannelTestService } from 'src/modules/relay/channel-test/channel-test.service';
import { Module } from '@nestjs/common';
import { BillingModule } from 'src/modules/billing/billing.module';
import { ChatCompletionsController } from 'src/modules/chat-completions/chat-completions.controller';
import { ChatCompletionsService } from 'src/modules/relay/completion-relay.service';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { UpstreamClient } from 'src/modules/relay/upstream/upstream-client';
import { ChannelsModule } from 'src/modules/channels/channels.module';
import { ModelsModule } from 'src/modules/models/models.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

@Module({
  imports: [ModelsModule, ChannelsModule, BillingModule, RateLimitsModule],
  controllers: [ChatCompletionsController, AdminChannelTestController],
  providers: [CompletionAdmission, ChatCompletionsService, UpstreamClient, ChannelTestService],
  // Other /v1 routes share the admission and the upstream pools (embeddings), or the whole relay in
  // another wire format (the Responses API).
  exports: [CompletionAdmission, ChatCompletionsService, UpstreamClient],
})
export class ChatCompletionsModule {}
