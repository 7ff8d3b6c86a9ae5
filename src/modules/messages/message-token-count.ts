import { ApiError } from 'src/common/errors/api-error';
import { withFields } from 'src/common/with-fields';
import { imageFamiliesOf } from 'src/modules/billing/image-families';
import { estimateRequestTokens } from 'src/modules/billing/token-estimator';
import { validateChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { CatalogModel } from 'src/modules/models/catalog.service';
import { replayedThinkingTokens, translateMessagesRequest } from 'src/modules/messages/messages-request';

type Json = Record<string, unknown>;

/**
 * Fields of a message request that shape the answer, not the prompt: they change no count, and
 * Anthropic's count endpoint refuses them ("Extra inputs are not permitted"), so they are not sent to it.
 * A client may still send them, as it would to /v1/messages.
 */
const GENERATION_ONLY_FIELDS = ['max_tokens', 'stream', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'metadata'];

/** A count request, checked as the same body sent to /v1/messages would be. */
export interface CountRequest {
  /** The client's body, as it came. */
  body: Json;
  /** Its chat-completions translation: what the gateway's own count reads. */
  chatBody: Json;
  model: CatalogModel;
}

/**
 * Checks a count body as /v1/messages checks a message body (the same 400s, naming the same fields),
 * except that `max_tokens` is not asked for: Anthropic's count takes none.
 */
export function checkCountRequest(body: unknown, findModel: (id: string) => CatalogModel | undefined): CountRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.invalid('The request body must be a JSON object.');
  }
  const client = body as Json;
  // Any cap will do for the check: the count reads no output cap.
  const chatBody = translateMessagesRequest(withFields(client, { max_tokens: 1, stream: false }));
  const { model } = validateChatRequest(chatBody, findModel);
  return { body: client, chatBody, model };
}

/** The body for Anthropic's own count: the client's, with the route's upstream model and no generation-only field. */
export function anthropicCountBody(body: Json, upstreamModel: string): Json {
  const sent = withFields(body, { model: upstreamModel });
  for (const field of GENERATION_ONLY_FIELDS) {
    delete sent[field];
  }
  return sent;
}

/**
 * The gateway's own count, for a model not routed to Anthropic: the estimate a message's hold is made
 * from (system, messages, tools, images by their size; token-estimator.ts), plus the earlier turns'
 * thinking blocks an Anthropic-shaped body carries. It errs high, never low, as a hold must.
 */
export function ownInputTokens(request: CountRequest): number {
  const { model } = request;
  const estimate = estimateRequestTokens(request.chatBody, {
    audioReferenceTokens: model.maxOutputTokens,
    imageFamilies: imageFamiliesOf(model.routes),
  });
  return estimate + replayedThinkingTokens(request.body);
}
