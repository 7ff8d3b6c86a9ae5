import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { TextCompletionDto, TextCompletionRequestDto } from 'src/modules/text-completions/dto/text-completion.dto';
import {
  TextCompletionAdmission,
  validateTextCompletionRequest,
} from 'src/modules/text-completions/text-completion-request.validator';
import { TextCompletionsService } from 'src/modules/text-completions/text-completions.service';

/** The legacy completions API: admitted like a chat completion (limits, hold, slot), with its own validation. */
@ApiTags('v1')
@ApiKeyAuth()
@ApiExtraModels(TextCompletionDto)
@Controller('v1/completions')
export class TextCompletionsController {
  constructor(
    private readonly admission: CompletionAdmission,
    private readonly service: TextCompletionsService,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiBody({ type: TextCompletionRequestDto })
  @ApiOkResponse({
    description: 'A text completion; with `stream: true`, server-sent events of chunks ending with `data: [DONE]`.',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(TextCompletionDto) } },
      'text/event-stream': { schema: { $ref: getSchemaPath(TextCompletionDto) } },
    },
  })
  createCompletion(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    const principal = request.principal;
    if (principal?.kind !== AuthKind.ApiKey) {
      throw new Error('the legacy completions route was reached without API-key authentication');
    }
    return this.admission.run<MeteredStatus, TextCompletionAdmission>(
      principal,
      request,
      reply,
      (admitted) => this.service.complete(admitted, reply),
      validateTextCompletionRequest,
    );
  }
}
