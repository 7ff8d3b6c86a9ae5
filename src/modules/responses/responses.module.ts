import { Module } from '@nestjs/common';
import { ChatCompletionsModule } from 'src/modules/chat-completions/chat-completions.module';
import { ConversationsController } from 'src/modules/responses/conversations.controller';
import { ResponsesController } from 'src/modules/responses/responses.controller';
import { ResponsesService } from 'src/modules/responses/responses.service';
import { StoredResponsesRepository } from 'src/modules/responses/stored/stored-responses.repository';
import { StoredResponses } from 'src/modules/responses/stored/stored-responses.service';

@Module({
  imports: [ChatCompletionsModule],
  controllers: [ResponsesController, ConversationsController],
  providers: [ResponsesService, StoredResponses, StoredResponsesRepository],
})
export class ResponsesModule {}
