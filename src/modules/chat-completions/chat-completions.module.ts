import { Module } from '@nestjs/common';
import { ChatCompletionsController } from 'src/modules/chat-completions/chat-completions.controller';
import { RelayModule } from 'src/modules/relay/relay.module';

/** POST /v1/chat/completions: the relay's own request format, admitted and relayed as it comes. */
@Module({
  imports: [RelayModule],
  controllers: [ChatCompletionsController],
})
export class ChatCompletionsModule {}
