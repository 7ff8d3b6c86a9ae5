import { Module } from '@nestjs/common';
import { ChatCompletionsModule } from 'src/modules/chat-completions/chat-completions.module';
import { ResponsesController } from 'src/modules/responses/responses.controller';
import { ResponsesService } from 'src/modules/responses/responses.service';

@Module({
  imports: [ChatCompletionsModule],
  controllers: [ResponsesController],
  providers: [ResponsesService],
})
export class ResponsesModule {}
