import { Module } from '@nestjs/common';
import { RelayModule } from 'src/modules/relay/relay.module';
import { EmbeddingsController } from 'src/modules/embeddings/embeddings.controller';
import { EmbeddingsService } from 'src/modules/embeddings/embeddings.service';

/** POST /v1/embeddings, on the relay's admission and upstream pools. */
@Module({
  imports: [RelayModule],
  controllers: [EmbeddingsController],
  providers: [EmbeddingsService],
})
export class EmbeddingsModule {}
