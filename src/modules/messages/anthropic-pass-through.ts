import { ApiError } from 'src/common/errors/api-error';
import { TokenUsage } from 'src/modules/billing/metering.types';
import { countCompletionTokens } from 'src/modules/billing/token-estimator';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { PassedAnswer, PassThrough } from 'src/modules/relay/reply-format';
import { usageOf as anthropicTokenUsage } from 'src/modules/relay/upstream/anthropic.adapter';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { PassThroughStream, generatedTextOf } from 'src/modules/messages/anthropic-pass-through-stream';
import { withFields } from 'src/common/with-fields';

type Json = Record<string, unknown>;

/** The version Anthropic's SDKs send; used when the client sent none. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
const VERSION_PATTERN = /^[\w.-]{1,64}$/;
/** Comma-separated feature names, e.g. `prompt-caching-2024-07-31,interleaved-thinking-2025-05-14`. */
const BETA_PATTERN = /^[\w.-]+(?:\s*,\s*[\w.-]+)*$/;
const BETA_MAX_CHARS = 1024;

/** The `anthropic-*` headers a client's request passes on to an Anthropic channel. */
export interface AnthropicHeaders {
  version: string;
  beta: string | null;
}

type HeaderValue = string | string[] | undefined;

/** Reads and checks the client's `anthropic-version` and `anthropic-beta` (repeated headers are one list). */
export function anthropicHeaders(headers: Record<string, HeaderValue>): AnthropicHeaders {
  const version = joined(headers['anthropic-version']);
  const beta = joined(headers['anthropic-beta']);
  if (version !== null && !VERSION_PATTERN.test(version)) {
    throw ApiError.invalid('anthropic-version: Input should be a version such as 2023-06-01.', 'anthropic-version');
  }
  if (beta !== null && (beta.length > BETA_MAX_CHARS || !BETA_PATTERN.test(beta))) {
    throw ApiError.invalid('anthropic-beta: Input should be a comma-separated list of beta names.', 'anthropic-beta');
  }
  return { version: version ?? DEFAULT_ANTHROPIC_VERSION, beta };
}

function joined(value: HeaderValue): string | null {
  const text = Array.isArray(value) ? value.join(',') : value;
  return text === undefined || text.trim() === '' ? null : text.trim();
}

/**
 * The client's Messages body for an Anthropic channel: sent as it came, with only `model` swapped for the
 * route's upstream model and `max_tokens` set to the cap the hold was computed from (the validated
 * value), and the channel's own key in place of the client's.
 */
export function anthropicPassThrough(
  body: Json,
  headers: AnthropicHeaders,
  modelShown: string,
  route: CatalogRoute,
  chat: ChatRequest,
): PassThrough {
  const payload = withFields(body, {
    model: route.upstreamModel,
    max_tokens: chat.maxTokens ?? chat.model.maxOutputTokens,
  });
  const requestHeaders: Record<string, string> = {
    'x-api-key': route.channel.apiKey,
    'anthropic-version': headers.version,
    'content-type': 'application/json',
  };
  if (headers.beta !== null) {
    requestHeaders['anthropic-beta'] = headers.beta;
  }
  return {
    request: { path: '/messages', headers: requestHeaders, payload: JSON.stringify(payload) },
    answer: (upstream) => passedMessage(upstream, modelShown),
    stream: () => new PassThroughStream(modelShown).output(),
  };
}

/** Anthropic's message as it came, showing the gateway's model id; null when it is not a message. */
function passedMessage(upstream: unknown, modelShown: string): PassedAnswer | null {
  if (!isRecord(upstream) || upstream.type !== 'message' || !Array.isArray(upstream.content)) {
    return null;
  }
  const content = upstream.content as unknown[];
  return {
    usage: anthropicTokenUsage(upstream.usage),
    deliveredTokens: () => countCompletionTokens(content.map(generatedTextOf).join('')),
    body: (billed) =>
      withFields(upstream, {
        model: modelShown,
        usage: isRecord(upstream.usage) ? upstream.usage : anthropicWireUsage(billed),
      }),
  };
}

/** Billed usage in Anthropic's terms, for an answer that carried none: input_tokens leave the cache out. */
function anthropicWireUsage(usage: TokenUsage): Json {
  const cached = usage.cachedTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  return {
    input_tokens: usage.promptTokens - cached - written,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: written,
    output_tokens: usage.completionTokens,
  };
}
