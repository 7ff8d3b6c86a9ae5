import { Module } from '@nestjs/common';
import { ChatCompletionsController } from 'src/modules/chat-completions/chat-completions.controller';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { UpstreamClient } from 'src/modules/chat-completions/upstream/upstream-client';
import { ModelsModule } from 'src/modules/models/models.module';

@Module({
  imports: [ModelsModule],
  controllers: [ChatCompletionsController],
  providers: [ChatCompletionsService, UpstreamClient],
})
export class ChatCompletionsModule {}
