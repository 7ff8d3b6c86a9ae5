import { Module } from '@nestjs/common';
import { RelayModule } from 'src/modules/relay/relay.module';
import { TextCompletionsController } from 'src/modules/text-completions/text-completions.controller';
import { TextCompletionsService } from 'src/modules/text-completions/text-completions.service';

/** The legacy POST /v1/completions, on the relay's admission, upstream pools and stream relay. */
@Module({
  imports: [RelayModule],
  controllers: [TextCompletionsController],
  providers: [TextCompletionsService],
})
export class TextCompletionsModule {}
