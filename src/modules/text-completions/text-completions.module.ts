import { Module } from '@nestjs/common';
import { ChatCompletionsModule } from 'src/modules/chat-completions/chat-completions.module';
import { TextCompletionsController } from 'src/modules/text-completions/text-completions.controller';
import { TextCompletionsService } from 'src/modules/text-completions/text-completions.service';

/** The legacy POST /v1/completions, on the chat relay's admission, upstream pools and stream relay. */
@Module({
  imports: [ChatCompletionsModule],
  controllers: [TextCompletionsController],
  providers: [TextCompletionsService],
})
export class TextCompletionsModule {}
