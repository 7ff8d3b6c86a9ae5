import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth, ApiKeyPrincipal, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { CompletionRelay } from 'src/modules/relay/completion-relay.service';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { admitChatRequest } from 'src/modules/relay/chat-request/chat-admission';
import {
  ChatCompletionChunkDto,
  ChatCompletionDto,
  ChatCompletionRequestDto,
  CONTENT_PART_DTOS,
} from 'src/modules/chat-completions/dto/chat-completion.dto';

/**
 * The handler runs the relay inside the admission (CompletionAdmission.run) rather than behind a Nest
 * interceptor: the same order and give-backs, without an rxjs pipeline and two async-context bindings
 * per request, which cost several percent of the API's CPU under load.
 */
@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(ChatCompletionDto, ChatCompletionChunkDto, ...Object.values(CONTENT_PART_DTOS))
@Controller('v1/chat/completions')
export class ChatCompletionsController {
  constructor(
    private readonly admission: CompletionAdmission,
    private readonly relay: CompletionRelay,
  ) {}

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
  createChatCompletion(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    return this.admission.run(
      apiKeyPrincipal(request),
      request,
      reply,
      (admitted) => this.relay.complete(admitted, reply),
      admitChatRequest,
    );
  }
}

function apiKeyPrincipal(request: AuthenticatedRequest): ApiKeyPrincipal {
  const principal = request.principal;
  if (principal?.kind !== AuthKind.ApiKey) {
    throw new Error('the completion route was reached without API-key authentication');
  }
  return principal;
}
