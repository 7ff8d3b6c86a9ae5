import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiKeyAuth, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { EmbeddingListDto, EmbeddingRequestDto } from 'src/modules/embeddings/dto/embedding.dto';
import { EmbeddingAdmission, validateEmbeddingRequest } from 'src/modules/embeddings/embedding-request.validator';
import { EmbeddingsService } from 'src/modules/embeddings/embeddings.service';

/** Admitted like a chat completion (limits, hold, slot), with the embeddings route's own validation. */
@ApiTags('v1')
@ApiKeyAuth()
@Controller('v1/embeddings')
export class EmbeddingsController {
  constructor(
    private readonly admission: CompletionAdmission,
    private readonly service: EmbeddingsService,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiBody({ type: EmbeddingRequestDto })
  @ApiOkResponse({ type: EmbeddingListDto, description: 'One embedding per input, in input order' })
  createEmbedding(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<MeteredStatus> {
    const principal = request.principal;
    if (principal?.kind !== AuthKind.ApiKey) {
      throw new Error('the embeddings route was reached without API-key authentication');
    }
    return this.admission.run<MeteredStatus, EmbeddingAdmission>(
      principal,
      request,
      reply,
      (admitted) => this.service.embed(admitted, reply),
      validateEmbeddingRequest,
    );
  }
}
