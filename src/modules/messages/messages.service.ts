import { Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError } from 'src/common/errors/api-error';
import { MeteredStatus, withMorePromptTokens } from 'src/modules/billing/metering.types';
import { CompletionRelay } from 'src/modules/relay/completion-relay.service';
import { CompletionAdmission, RequestValidator } from 'src/modules/relay/admission/completion-admission.service';
import { admitChatRequest, ChatAdmission } from 'src/modules/relay/chat-request/chat-admission';
import { anthropicHeaders } from 'src/modules/messages/anthropic-pass-through';
import { MessagesReplyFormat } from 'src/modules/messages/messages-reply.format';
import { messagesParam, replayedThinkingTokens, translateMessagesRequest } from 'src/modules/messages/messages-request';
import { withFields } from 'src/common/with-fields';

type Headers = Record<string, string | string[] | undefined>;

/**
 * POST /v1/messages (Anthropic's Messages API): the request becomes a chat-completions body and goes
 * through the same admission (limits, hold, slot, usage record) and relay as chat, so it is routed,
 * failed over and billed exactly as the equivalent chat request. On each route to an Anthropic channel
 * the client's own body and answer pass through untranslated; on the others only the answer is reshaped.
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly admission: CompletionAdmission,
    private readonly relay: CompletionRelay,
  ) {}

  async create(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string; headers: Headers },
    reply: FastifyReply,
  ): Promise<MeteredStatus> {
    const chatBody = translateMessagesRequest(request.body);
    const client = { body: request.body as Record<string, unknown>, headers: anthropicHeaders(request.headers) };
    const format = new MessagesReplyFormat(chatBody.model as string, client);
    try {
      return await this.admission.run(
        principal,
        { body: chatBody, id: request.id },
        reply,
        (admitted) => this.relay.complete(admitted, reply, format),
        holdingPassedThinking(replayedThinkingTokens(client.body)),
      );
    } catch (error) {
      throw inMessagesTerms(error);
    }
  }
}

/**
 * Chat's admission, with the earlier turns' thinking blocks added to the prompt held: the chat body
 * leaves them out, but an Anthropic channel receives them (and may bill them) as the client sent them.
 */
function holdingPassedThinking(thinkingTokens: number): RequestValidator<ChatAdmission> {
  return (body, findModel, bodyLater) => {
    const admitted = admitChatRequest(body, findModel, bodyLater);
    return withFields(admitted, { held: withMorePromptTokens(admitted.held, thinkingTokens) });
  };
}

/** A refusal naming a chat parameter names the Messages one the client sent, in Anthropic's `field: …` style. */
export function inMessagesTerms(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.param === null) {
    return error;
  }
  const param = messagesParam(error.param) ?? error.param;
  const message = error.message.startsWith(`${error.param} `)
    ? `${param}: ${error.message.slice(error.param.length + 1)}`
    : `${param}: ${error.message}`;
  return new ApiError(error.kind, message, param, error.shape.code ?? undefined, error.headers);
}
