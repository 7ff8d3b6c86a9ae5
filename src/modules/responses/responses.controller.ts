import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import {
  RESPONSE_ITEM_DTOS,
  ResponseDto,
  ResponseRequestDto,
  ResponseStreamEventDto,
} from 'src/modules/responses/dto/response.dto';
import { ResponsesService } from 'src/modules/responses/responses.service';

@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(ResponseDto, ResponseStreamEventDto, ...RESPONSE_ITEM_DTOS)
@Controller('v1/responses')
export class ResponsesController {
  constructor(private readonly service: ResponsesService) {}

  @Post()
  @HttpCode(200)
  @ApiBody({ type: ResponseRequestDto })
  @ApiOkResponse({
    description:
      'A response (stateless: nothing is stored); with `stream: true`, server-sent events named by their `type`, ' +
      'from `response.created` to `response.completed` (or `response.incomplete`, or `response.failed` when cut short).',
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
}
