import { Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError } from 'src/common/errors/api-error';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { CompletionAdmission } from 'src/modules/chat-completions/completion-admission.service';
import { ResponsesReplyFormat } from 'src/modules/responses/responses-reply.format';
import { responsesParam, translateResponsesRequest } from 'src/modules/responses/responses-request';

/**
 * POST /v1/responses, stateless: the request becomes a chat-completions body and goes through the
 * same admission (limits, hold, slot, usage record) and the same relay as chat, so it is routed,
 * failed over and billed exactly as the equivalent chat request; only the answer is reshaped.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly admission: CompletionAdmission,
    private readonly chat: ChatCompletionsService,
  ) {}

  async create(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string },
    reply: FastifyReply,
  ): Promise<MeteredStatus> {
    const { chatBody, echo } = translateResponsesRequest(request.body);
    const format = new ResponsesReplyFormat(echo);
    try {
      return await this.admission.run(principal, { body: chatBody, id: request.id }, reply, (admitted) =>
        this.chat.complete(admitted, reply, format),
      );
    } catch (error) {
      throw inResponsesTerms(error);
    }
  }
}

/** A refusal naming a chat parameter names the Responses one the client sent instead. */
function inResponsesTerms(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.param === null) {
    return error;
  }
  const param = responsesParam(error.param);
  if (param === error.param) {
    return error;
  }
  const message = error.message.replace(error.param, param ?? '');
  return new ApiError(error.kind, message, param, error.shape.code ?? undefined, error.headers);
}
