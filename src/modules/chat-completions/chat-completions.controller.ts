import { Controller, HttpCode, Post, Res, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth } from 'src/common/decorators/auth.decorators';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import { AdmittedCompletion } from 'src/modules/chat-completions/completion-admission.service';
import {
  ChatCompletionChunkDto,
  ChatCompletionDto,
  ChatCompletionRequestDto,
  CONTENT_PART_DTOS,
} from 'src/modules/chat-completions/dto/chat-completion.dto';
import { Admitted, MeteringInterceptor } from 'src/modules/chat-completions/metering.interceptor';

@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(ChatCompletionDto, ChatCompletionChunkDto, ...Object.values(CONTENT_PART_DTOS))
@Controller('v1/chat/completions')
export class ChatCompletionsController {
  constructor(private readonly service: ChatCompletionsService) {}

  @Post()
  @HttpCode(200)
  @UseInterceptors(MeteringInterceptor)
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiOkResponse({
    description: 'A chat completion; with `stream: true`, server-sent events of chunks ending with `data: [DONE]`.',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ChatCompletionDto) } },
      'text/event-stream': { schema: { $ref: getSchemaPath(ChatCompletionChunkDto) } },
    },
  })
  createChatCompletion(@Admitted() admitted: AdmittedCompletion, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    return this.service.complete(admitted, reply);
  }
}
