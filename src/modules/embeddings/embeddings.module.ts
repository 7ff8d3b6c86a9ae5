import { Module } from '@nestjs/common';
import { ChatCompletionsModule } from 'src/modules/chat-completions/chat-completions.module';
import { EmbeddingsController } from 'src/modules/embeddings/embeddings.controller';
import { EmbeddingsService } from 'src/modules/embeddings/embeddings.service';

/** POST /v1/embeddings, on the chat relay's admission and upstream pools. */
@Module({
  imports: [ChatCompletionsModule],
  controllers: [EmbeddingsController],
  providers: [EmbeddingsService],
})
export class EmbeddingsModule {}
