import { Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError } from 'src/common/errors/api-error';
import { withFields } from 'src/common/with-fields';
import { MeteredStatus } from 'src/modules/billing/metering.types';
import { CompletionRelay } from 'src/modules/relay/completion-relay.service';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { admitChatRequest } from 'src/modules/relay/chat-request/chat-admission';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { ResponsesReplyFormat } from 'src/modules/responses/responses-reply.format';
import { responsesParam, translateResponsesRequest } from 'src/modules/responses/responses-request';
import { StoredResponses } from 'src/modules/responses/stored/stored-responses.service';

/**
 * POST /v1/responses: the request becomes a chat-completions body and goes through the same
 * admission (limits, hold, slot, usage record) and the same relay as chat, so it is routed, failed
 * over and billed exactly as the equivalent chat request; only the answer is reshaped. Items the
 * input refers to are put in first, so the hold and the bill count them as prompt like any input;
 * the answer's own items are kept (StoredResponses) once it was sent.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly admission: CompletionAdmission,
    private readonly relay: CompletionRelay,
    private readonly stored: StoredResponses,
  ) {}

  async create(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string },
    reply: FastifyReply,
  ): Promise<MeteredStatus> {
    try {
      const body = await this.withReferencedItems(principal.accountId, request.body);
      const { chatBody, echo } = translateResponsesRequest(body, this.stored.enabled);
      const format = new ResponsesReplyFormat(echo);
      const status = await this.admission.run(
        principal,
        { body: chatBody, id: request.id },
        reply,
        (admitted) => this.relay.complete(admitted, reply, format),
        admitChatRequest,
      );
      if (echo.store && format.finished) {
        // After the answer's last byte, and not awaited: keeping it never delays or fails the request.
        void this.stored.keep(principal.accountId, format.finished);
      }
      return status;
    } catch (error) {
      throw inResponsesTerms(error);
    }
  }

  /** The body with its `item_reference`s replaced; the same object, unread, when it has none. */
  private async withReferencedItems(accountId: string, body: unknown): Promise<unknown> {
    if (!isRecord(body)) {
      return body;
    }
    const input = await this.stored.resolveReferences(accountId, body.input);
    return input === body.input ? body : withFields(body, { input });
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
