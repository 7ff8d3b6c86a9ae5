import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth } from 'src/common/decorators/auth.decorators';
import { CompletionOutcome, ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import {
  ChatCompletionChunkDto,
  ChatCompletionDto,
  ChatCompletionRequestDto,
  ContentPartDto,
} from 'src/modules/chat-completions/dto/chat-completion.dto';

@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(ChatCompletionChunkDto, ContentPartDto)
@Controller('v1/chat/completions')
export class ChatCompletionsController {
  constructor(private readonly service: ChatCompletionsService) {}

  @Post()
  @HttpCode(200)
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiOkResponse({
    description: 'A chat completion; with `stream: true`, server-sent events of chunks ending with `data: [DONE]`.',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ChatCompletionDto) } },
      'text/event-stream': { schema: { $ref: getSchemaPath(ChatCompletionChunkDto) } },
    },
  })
  @ApiExtraModels(ChatCompletionDto)
  createChatCompletion(@Body() body: unknown, @Res() reply: FastifyReply): Promise<CompletionOutcome> {
    return this.service.complete(body, reply);
  }
}
