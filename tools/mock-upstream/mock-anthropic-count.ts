import { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { mockPromptTokens, textOfParts } from 'tools/mock-upstream/provider-dialects';

type Json = Record<string, unknown>;

/** Fields of a message request that Anthropic's count endpoint refuses: they shape the answer, not the prompt. */
const GENERATION_ONLY_FIELDS = ['max_tokens', 'stream', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'metadata'];

/**
 * Anthropic's `POST /v1/messages/count_tokens` as published: the body of a message request without
 * `max_tokens`, the `x-api-key` and `anthropic-version` headers, and `{"input_tokens": N}` back. N is
 * the mock's own input count for the same body (one per word plus 3 per turn, mockPromptTokens), so a
 * count equals what a message of that body is billed as input, as Anthropic's exact count does.
 */
export function respondAnthropicCount(res: ServerResponse, headers: IncomingHttpHeaders, body: Json): void {
  if (typeof headers['anthropic-version'] !== 'string' || headers['anthropic-version'] === '') {
    return refuse(res, 400, 'anthropic-version: header is required');
  }
  const extra = GENERATION_ONLY_FIELDS.find((field) => body[field] !== undefined);
  if (extra) {
    return refuse(res, 400, `${extra}: Extra inputs are not permitted`);
  }
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    return refuse(res, 400, 'model and messages: Field required');
  }
  const inputTokens = mockPromptTokens(body.messages as unknown[], textOfParts(body.system));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: inputTokens }));
}

function refuse(res: ServerResponse, status: number, message: string): void {
  const error = { type: 'error', error: { type: 'invalid_request_error', message } };
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(error));
}
