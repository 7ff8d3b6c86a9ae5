import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiExcludeEndpoint,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import {
  ApiKeyAuth,
  ApiKeyPrincipal,
  AuthenticatedRequest,
  AuthKind,
  CurrentPrincipal,
} from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import {
  DeletedResponseDto,
  RESPONSE_ITEM_DTOS,
  ResponseDto,
  ResponseRequestDto,
  ResponseStreamEventDto,
} from 'src/modules/responses/dto/response.dto';
import { ResponsesService } from 'src/modules/responses/responses.service';
import { StoredResponses } from 'src/modules/responses/stored/stored-responses.service';

const RESPONSE_ID = { name: 'id', type: String, description: 'The `id` of an earlier answer', example: 'resp_67cc' };

@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(ResponseDto, ResponseStreamEventDto, ...RESPONSE_ITEM_DTOS)
@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly service: ResponsesService,
    private readonly stored: StoredResponses,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiBody({ type: ResponseRequestDto })
  @ApiOkResponse({
    description:
      'A response (its input is never stored; its output items are kept when `store` is true or absent, see ' +
      '`store`); with `stream: true`, server-sent events named by their `type`, from `response.created` to ' +
      '`response.completed` (or `response.incomplete`, or `response.failed` when cut short).',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ResponseDto) } },
      'text/event-stream': { schema: { $ref: getSchemaPath(ResponseStreamEventDto) } },
    },
  })
  createResponse(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    const principal = request.principal;
    if (principal?.kind !== AuthKind.ApiKey) {
      throw new Error('the responses route was reached without API-key authentication');
    }
    return this.service.create(principal, request, reply);
  }

  @Get(':id')
  @ApiParam(RESPONSE_ID)
  @ApiOkResponse({
    type: ResponseDto,
    description: 'A kept answer: its output items, status and usage; the request fields are absent (never stored)',
  })
  @ApiNotFoundResponse({ description: 'Not kept for this account: unknown, expired, deleted, or `store: false`' })
  async retrieveResponse(
    @Param('id') id: string,
    @CurrentPrincipal() principal: ApiKeyPrincipal,
  ): Promise<Record<string, unknown>> {
    this.refuseWhenNothingIsKept(id);
    const found = await this.stored.find(principal.accountId, id);
    if (!found) {
      throw this.notKept(id);
    }
    return found;
  }

  @Delete(':id')
  @ApiParam(RESPONSE_ID)
  @ApiOkResponse({ type: DeletedResponseDto, description: 'The answer and its output items are deleted' })
  @ApiNotFoundResponse({ description: 'Not kept for this account: unknown, expired, deleted, or `store: false`' })
  async deleteResponse(
    @Param('id') id: string,
    @CurrentPrincipal() principal: ApiKeyPrincipal,
  ): Promise<DeletedResponseDto> {
    this.refuseWhenNothingIsKept(id);
    if (!(await this.stored.delete(principal.accountId, id))) {
      throw this.notKept(id);
    }
    return { id, object: 'response', deleted: true };
  }

  /** Answers only to say why (docs/responses.md): not an operation of this API, so not in OpenAPI. */
  @Get(':id/input_items')
  @ApiExcludeEndpoint()
  listInputItems(@Param('id') id: string): never {
    throw new ApiError(
      ErrorKind.NotFound,
      `The input of '${id}' is not available: this gateway never stores a request's input, only the output ` +
        'items of answers made with store: true (GET /v1/responses/{id}). Keep the input on your side.',
    );
  }

  /** As input_items: a refusal that says what to do instead. */
  @Post(':id/cancel')
  @ApiExcludeEndpoint()
  cancelResponse(@Param('id') id: string): never {
    throw ApiError.invalid(
      `'${id}' cannot be cancelled: only background responses can be, and this gateway answers every response ` +
        'in its request (background is not supported). To stop an answer, close its connection.',
    );
  }

  /** A 404 saying so when this deployment keeps no answers at all (RESPONSES_STORE=false). */
  private refuseWhenNothingIsKept(id: string): void {
    if (!this.stored.enabled) {
      throw new ApiError(
        ErrorKind.NotFound,
        `No response '${id}' is kept: this gateway keeps no responses (its operator turned storing off). ` +
          'Send the whole conversation in input, and keep what you need of the answers on your side.',
      );
    }
  }

  private notKept(id: string): ApiError {
    return new ApiError(
      ErrorKind.NotFound,
      `No response '${id}' is kept for your account: it is unknown, expired ` +
        `(answers are kept ${this.stored.ttlDays} days), deleted, another account's, or was made with store: false.`,
    );
  }
}
