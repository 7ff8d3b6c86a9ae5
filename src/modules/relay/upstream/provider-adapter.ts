import { TokenUsage } from 'src/modules/billing/metering.types';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { CancelSignal } from 'src/common/http/cancel-signal';
import { RelayedBytes } from 'src/modules/relay/upstream/relayed-body';

export interface UpstreamRequest {
  path: string;
  headers: Record<string, string>;
  /** JSON text, or the client's own bytes with edits (relayed-body.ts). */
  payload: string | RelayedBytes;
}

/** Turns one upstream stream event into the wire events to forward (already framed text, without the blank line). */
export interface StreamTranslator {
  translate(event: string): string[];
  /** Usage the upstream reported in the stream so far, if any. */
  usage(): TokenUsage | null;
  /** Whether the upstream signalled the normal end of the stream. */
  finished(): boolean;
  /** Tokens of the text delivered so far (content, refusals, tool-call arguments), for billing without usage. */
  deliveredTokens(): number;
  /** A usage chunk in the stream's own id and model, for when the client asked for usage and the upstream sent none. */
  usageEvent(usage: TokenUsage): string;
}

/** Our usage object; each details object only when the upstream gave its count (an unknown count is not 0). */
export function wireUsage(usage: TokenUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
  };
}

/** What differs between upstream families: the request they take and the answers they give. */
export interface ProviderAdapter {
  /** May take a while (Gemini fetches the images it is given by URL), hence async and the client's `signal`. */
  buildRequest(
    route: CatalogRoute,
    body: Record<string, unknown>,
    chat: ChatRequest,
    signal?: CancelSignal,
  ): UpstreamRequest | Promise<UpstreamRequest>;
  /** The upstream's JSON answer as a `chat.completion` object for `modelId`, or null if it is not a valid answer. */
  toCompletion(upstream: unknown, modelId: string): Record<string, unknown> | null;
  /**
   * The usage to bill from the upstream's JSON answer, when it says more than our wire usage can carry
   * (Anthropic's cache writes); otherwise the completion's own usage is billed.
   */
  billedUsage?(upstream: unknown): TokenUsage | null;
  streamTranslator(route: CatalogRoute, chat: ChatRequest): StreamTranslator;
  /** What an upstream error body says: relayed (sanitized) as a 400, or a reason to try the next route. */
  errorDetails(upstream: unknown): UpstreamErrorDetails | null;
}

export interface UpstreamErrorDetails {
  message: string;
  param: string | null;
  /** The channel's own account cannot serve (no quota, billing off, bad key): the next route may. */
  channelCannotServe: boolean;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An OpenAI usage object, with its cached and reasoning counts when it has them. */
export function usageFrom(value: unknown): TokenUsage | null {
  if (!isRecord(value) || typeof value.prompt_tokens !== 'number' || typeof value.completion_tokens !== 'number') {
    return null;
  }
  const usage: TokenUsage = { promptTokens: value.prompt_tokens, completionTokens: value.completion_tokens };
  const cached = countIn(value.prompt_tokens_details, 'cached_tokens');
  const reasoning = countIn(value.completion_tokens_details, 'reasoning_tokens');
  if (cached !== undefined) {
    usage.cachedTokens = Math.min(cached, usage.promptTokens);
  }
  if (reasoning !== undefined) {
    usage.reasoningTokens = Math.min(reasoning, usage.completionTokens);
  }
  return usage;
}

/** A non-negative whole count at `field` of `object`, if there is one. */
export function countIn(object: unknown, field: string): number | undefined {
  const value = isRecord(object) ? object[field] : undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The generated text of chat.completion choices or chunk deltas, for token counting. */
export function generatedText(choices: unknown, field: 'message' | 'delta'): string {
  if (!Array.isArray(choices)) {
    return '';
  }
  let text = '';
  for (const choice of choices) {
    const part = isRecord(choice) ? choice[field] : undefined;
    if (!isRecord(part)) {
      continue;
    }
    for (const value of [part.content, part.refusal]) {
      text += typeof value === 'string' ? value : '';
    }
    if (Array.isArray(part.tool_calls)) {
      text += JSON.stringify(part.tool_calls);
    }
  }
  return text;
}
