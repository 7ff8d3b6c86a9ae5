import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import {
  ApiBody,
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { ANTHROPIC_WIRE } from 'src/common/http/wire-format';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import {
  AnthropicErrorDto,
  MessageDto,
  MessageRequestDto,
  MessageStreamEventDto,
} from 'src/modules/messages/dto/message.dto';
import { MessageCountTokensRequestDto, MessageTokenCountDto } from 'src/modules/messages/dto/message-token-count.dto';
import { MessageTokenCounter, TokenCount } from 'src/modules/messages/message-token-counter.service';
import { MessagesService } from 'src/modules/messages/messages.service';

const ERROR_CONTENT = { 'application/json': { schema: { $ref: getSchemaPath(AnthropicErrorDto) } } };
const API_KEY_HEADER = {
  name: 'x-api-key',
  required: false,
  description: 'The API key, instead of Authorization: Bearer',
  schema: { type: 'string', example: 'sk-…' },
};
const VERSION_HEADER = {
  name: 'anthropic-version',
  required: false,
  description: 'Passed on to Anthropic channels (default 2023-06-01); not required',
  schema: { type: 'string', example: '2023-06-01', maxLength: 64, pattern: '^[\\w.-]{1,64}$' },
};
const BETA_HEADER = {
  name: 'anthropic-beta',
  required: false,
  description: 'Comma-separated beta names, passed on to Anthropic channels; not required',
  schema: { type: 'string', example: 'interleaved-thinking-2025-05-14', maxLength: 1024 },
};

@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(MessageDto, MessageStreamEventDto, AnthropicErrorDto)
@Controller('v1/messages')
export class MessagesController {
  constructor(
    private readonly service: MessagesService,
    private readonly counter: MessageTokenCounter,
  ) {}

  @Post()
  @HttpCode(200)
  @RouteConfig(ANTHROPIC_WIRE)
  @ApiHeader(API_KEY_HEADER)
  @ApiHeader(VERSION_HEADER)
  @ApiHeader(BETA_HEADER)
  @ApiBody({ type: MessageRequestDto })
  @ApiOkResponse({
    description:
      "A message in Anthropic's Messages API shape; with `stream: true`, Anthropic's named server-sent events " +
      'from `message_start` to `message_stop` (or `error` when cut short).',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(MessageDto) } },
      'text/event-stream': { schema: { $ref: getSchemaPath(MessageStreamEventDto) } },
    },
  })
  @ApiResponse({ status: 400, description: 'invalid_request_error, naming the field', content: ERROR_CONTENT })
  @ApiResponse({ status: 401, description: 'authentication_error', content: ERROR_CONTENT })
  @ApiResponse({
    status: 403,
    description: 'permission_error (insufficient balance, disabled key)',
    content: ERROR_CONTENT,
  })
  @ApiResponse({ status: 429, description: 'rate_limit_error', content: ERROR_CONTENT })
  @ApiResponse({ status: 529, description: 'overloaded_error', content: ERROR_CONTENT })
  createMessage(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    const principal = request.principal;
    if (principal?.kind !== AuthKind.ApiKey) {
      throw new Error('the messages route was reached without API-key authentication');
    }
    return this.service.create(principal, request, reply);
  }

  @Post('count_tokens')
  @HttpCode(200)
  @RouteConfig(ANTHROPIC_WIRE)
  @ApiHeader(API_KEY_HEADER)
  @ApiHeader(VERSION_HEADER)
  @ApiHeader(BETA_HEADER)
  @ApiBody({ type: MessageCountTokensRequestDto })
  @ApiOkResponse({
    description:
      "Anthropic's token count of a message request, not billed. Counted by Anthropic itself when the model " +
      'is routed to an Anthropic channel, otherwise by the gateway; limited per key and model (docs/messages.md).',
    type: MessageTokenCountDto,
  })
  @ApiResponse({ status: 400, description: 'invalid_request_error, naming the field', content: ERROR_CONTENT })
  @ApiResponse({ status: 401, description: 'authentication_error', content: ERROR_CONTENT })
  @ApiResponse({
    status: 403,
    description: 'permission_error (model not allowed, disabled key)',
    content: ERROR_CONTENT,
  })
  @ApiResponse({ status: 429, description: 'rate_limit_error', content: ERROR_CONTENT })
  countTokens(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenCount> {
    const principal = request.principal;
    if (principal?.kind !== AuthKind.ApiKey) {
      throw new Error('the token count route was reached without API-key authentication');
    }
    return this.counter.count(principal, request, reply);
  }
}
