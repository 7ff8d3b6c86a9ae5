import { All, Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ApiKeyAuth } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';

/**
 * OpenAI's /v1/conversations keep a conversation's items, input included, which this gateway never
 * stores: every path of it answers what to do instead, not a generic "Unknown path".
 */
@ApiKeyAuth()
@ApiExcludeController()
@Controller('v1/conversations')
export class ConversationsController {
  @All(['', '*'])
  refuse(): never {
    throw new ApiError(
      ErrorKind.NotFound,
      "Conversations are not supported: this gateway never stores a request's input. Send the conversation in " +
        "input with each request; earlier answers' output items may be sent as item_reference (docs/responses.md).",
    );
  }
}
