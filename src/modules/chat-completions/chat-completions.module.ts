import { Module } from '@nestjs/common';
import { BillingModule } from 'src/modules/billing/billing.module';
import { ChatCompletionsController } from 'src/modules/chat-completions/chat-completions.controller';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { CompletionAdmission } from 'src/modules/chat-completions/completion-admission.service';
import { UpstreamClient } from 'src/modules/chat-completions/upstream/upstream-client';
import { ModelsModule } from 'src/modules/models/models.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

@Module({
  imports: [ModelsModule, BillingModule, RateLimitsModule],
  controllers: [ChatCompletionsController],
  providers: [CompletionAdmission, ChatCompletionsService, UpstreamClient],
  // Other wire formats (the Responses API) admit and relay through the same two.
  exports: [CompletionAdmission, ChatCompletionsService],
})
export class ChatCompletionsModule {}
