import { Controller, HttpCode, Post, Req, Res, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth } from 'src/common/decorators/auth.decorators';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { MeteredStatus } from 'src/modules/chat-completions/completion-meter';
import {
  ChatCompletionChunkDto,
  ChatCompletionDto,
  ChatCompletionRequestDto,
  CONTENT_PART_DTOS,
} from 'src/modules/chat-completions/dto/chat-completion.dto';
import { CompletionRequest, MeteringInterceptor } from 'src/modules/chat-completions/metering.interceptor';
import { GatewayThrottlerGuard } from 'src/modules/rate-limits/gateway-throttler.guard';

@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(ChatCompletionDto, ChatCompletionChunkDto, ...Object.values(CONTENT_PART_DTOS))
@Controller('v1/chat/completions')
export class ChatCompletionsController {
  constructor(private readonly service: ChatCompletionsService) {}

  @Post()
  @HttpCode(200)
  @UseGuards(GatewayThrottlerGuard)
  @UseInterceptors(MeteringInterceptor)
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiOkResponse({
    description: 'A chat completion; with `stream: true`, server-sent events of chunks ending with `data: [DONE]`.',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ChatCompletionDto) } },
      'text/event-stream': { schema: { $ref: getSchemaPath(ChatCompletionChunkDto) } },
    },
  })
  createChatCompletion(@Req() request: CompletionRequest, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    const { chat, meter, signal } = request.completion!;
    return this.service.complete(chat, request.body as Record<string, unknown>, reply, meter, signal);
  }
}
