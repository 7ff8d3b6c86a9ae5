import { Module } from '@nestjs/common';
import { RelayModule } from 'src/modules/relay/relay.module';
import { ConversationsController } from 'src/modules/responses/conversations.controller';
import { ResponsesController } from 'src/modules/responses/responses.controller';
import { ResponsesService } from 'src/modules/responses/responses.service';
import { StoredResponsesRepository } from 'src/modules/responses/stored/stored-responses.repository';
import { StoredResponses } from 'src/modules/responses/stored/stored-responses.service';

@Module({
  imports: [RelayModule],
  controllers: [ResponsesController, ConversationsController],
  providers: [ResponsesService, StoredResponses, StoredResponsesRepository],
})
export class ResponsesModule {}
