import { Module } from '@nestjs/common';
import { ChatCompletionsModule } from 'src/modules/chat-completions/chat-completions.module';
import { MessagesController } from 'src/modules/messages/messages.controller';
import { MessagesService } from 'src/modules/messages/messages.service';

@Module({
  imports: [ChatCompletionsModule],
  controllers: [MessagesController],
  providers: [MessagesService],
})
export class MessagesModule {}
