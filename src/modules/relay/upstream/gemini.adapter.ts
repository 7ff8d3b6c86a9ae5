import { TokenUsage } from 'src/modules/billing/metering.types';
import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { countIn, isRecord, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import * as wire from 'src/modules/relay/upstream/translation';
import { geminiRequest, imageUrlsOf } from 'src/modules/relay/upstream/gemini-request';
import {
  fetchImages,
  ImageFetchLimits,
  ImageRefused,
  InlineImage,
} from 'src/modules/relay/upstream/image-fetch/image-fetcher';
import { randomUUID } from 'node:crypto';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { CancelSignal, RequestSignal } from 'src/common/http/cancel-signal';

const CONTENT_FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** Google's Gemini generateContent API behind our wire format. */
export class GeminiAdapter extends wire.TranslatingAdapter {
  /** One request's fetched images, kept while the request lives: a failover to another Gemini route fetches nothing again. */
  private readonly fetched = new WeakMap<object, Promise<Map<string, InlineImage>>>();

  constructor(private readonly imageLimits: ImageFetchLimits = STRICT_IMAGE_LIMITS) {
    super();
  }

  async buildRequest(
    route: CatalogRoute,
    body: wire.Json,
    chat: ChatRequest,
    signal: CancelSignal = new RequestSignal(),
  ): Promise<UpstreamRequest> {
    const request = geminiRequest(body, chat, await this.imagesOf(body, signal));
    const model = encodeURIComponent(route.upstreamModel);
    return {
      path: chat.stream ? `/models/${model}:streamGenerateContent?alt=sse` : `/models/${model}:generateContent`,
      headers: { 'x-goog-api-key': route.channel.apiKey, 'content-type': 'application/json' },
      payload: JSON.stringify(request),
    };
  }

  /** The request's image URLs, fetched for inlining (Gemini takes no URLs); a refusal is a 400 naming `messages`. */
  private imagesOf(body: wire.Json, signal: CancelSignal): Promise<Map<string, InlineImage>> {
    const urls = imageUrlsOf(body);
    if (urls.length === 0) {
      return Promise.resolve(new Map<string, InlineImage>());
    }
    let images = this.fetched.get(body);
    if (!images) {
      images = fetchImages(urls, this.imageLimits, signal).catch((error: unknown) => {
        throw error instanceof ImageRefused
          ? ApiError.invalid(`An image URL in messages could not be used: ${error.message}.`, 'messages')
          : error;
      });
      this.fetched.set(body, images);
    }
    return images;
  }

  toCompletion(upstream: unknown, modelId: string): wire.Json | null {
    if (!isRecord(upstream) || !Array.isArray(upstream.candidates)) {
      return null;
    }
    const choices = (upstream.candidates as unknown[]).map((candidate, i) => {
      const { text, toolCalls } = contentOf(candidate, 0);
      const message: wire.Json = { role: 'assistant', content: text === '' && toolCalls.length ? null : text };
      if (toolCalls.length) {
        message.tool_calls = toolCalls.map(({ index: _index, ...call }) => call);
      }
      return {
        index: candidateIndex(candidate, i),
        message,
        logprobs: null,
        finish_reason: finishReason(candidate, toolCalls.length > 0),
      };
    });
    const usage = usageOf(upstream.usageMetadata);
    const id = `chatcmpl-${typeof upstream.responseId === 'string' ? upstream.responseId : wire.unixNow()}`;
    return wire.completion(id, modelId, 'fp_gemini', choices, usage);
  }

  streamTranslator(_route: CatalogRoute, chat: ChatRequest): wire.TranslatingStreamTranslator {
    return new GeminiStreamTranslator(chat.model.id, chat.includeUsage, chat.n);
  }
}

/** Without the operator's settings (the channel test, the embeddings' error reading): the defaults. */
const STRICT_IMAGE_LIMITS: ImageFetchLimits = {
  maxBytes: 20 * 1024 * 1024,
  timeoutMs: 10_000,
  allowPrivate: false,
  allowHttp: false,
};

const candidateIndex = (candidate: unknown, position: number): number =>
  isRecord(candidate) && typeof candidate.index === 'number' ? candidate.index : position;

/** An OpenAI-style id for a tool call: Gemini's calls have none our clients could answer by. */
const toolCallId = () => `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;

/** A candidate's shown text (thought parts left out) and its function calls, numbered from `firstIndex`. */
function contentOf(
  candidate: unknown,
  firstIndex: number,
): { text: string; toolCalls: (wire.Json & { index: number })[] } {
  const parts =
    isRecord(candidate) && isRecord(candidate.content) && Array.isArray(candidate.content.parts)
      ? candidate.content.parts
      : [];
  let text = '';
  const toolCalls: (wire.Json & { index: number })[] = [];
  for (const part of parts as unknown[]) {
    if (isRecord(part) && typeof part.text === 'string' && part.thought !== true) {
      text += part.text;
    } else if (isRecord(part) && isRecord(part.functionCall)) {
      const fn = { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) };
      toolCalls.push({ index: firstIndex + toolCalls.length, id: toolCallId(), type: 'function', function: fn });
    }
  }
  return { text, toolCalls };
}

function finishReason(candidate: unknown, calledTools: boolean): string | null {
  const reason = isRecord(candidate) ? candidate.finishReason : undefined;
  if (typeof reason !== 'string') {
    return null;
  }
  if (reason === 'MAX_TOKENS') {
    return 'length';
  }
  if (CONTENT_FILTERED.has(reason)) {
    return 'content_filter';
  }
  return calledTools ? 'tool_calls' : 'stop';
}

/**
 * Gemini's promptTokenCount includes the cached content; candidatesTokenCount leaves out the
 * thinking, which Google bills as output: completion = candidates + thoughts, reasoning = thoughts.
 */
function usageOf(metadata: unknown): TokenUsage | null {
  if (!isRecord(metadata) || typeof metadata.promptTokenCount !== 'number') {
    return null;
  }
  const thoughts = countIn(metadata, 'thoughtsTokenCount') ?? 0;
  const completionTokens = (countIn(metadata, 'candidatesTokenCount') ?? 0) + thoughts;
  return {
    promptTokens: metadata.promptTokenCount,
    completionTokens,
    cachedTokens: Math.min(countIn(metadata, 'cachedContentTokenCount') ?? 0, metadata.promptTokenCount),
    reasoningTokens: thoughts,
  };
}

/**
 * Gemini's SSE stream (each event the new part of each candidate, no [DONE]) as our chunks: every
 * candidate (n > 1) under its own index, function calls as tool_calls deltas numbered per candidate.
 */
class GeminiStreamTranslator extends wire.TranslatingStreamTranslator {
  private started = false;
  private reported: TokenUsage | null = null;
  /** Per candidate index: the tool calls sent so far, and whether it finished. */
  private readonly candidates = new Map<number, { toolCalls: number; finished: boolean }>();

  constructor(
    modelId: string,
    clientWantsUsage: boolean,
    private readonly n: number,
  ) {
    super(modelId, clientWantsUsage);
  }

  protected translatePayload(payload: wire.Json): string[] {
    if (isRecord(payload.error)) {
      throw new Error(`upstream stream error: ${JSON.stringify(payload.error)}`);
    }
    if (!this.started && typeof payload.responseId === 'string') {
      this.base.id = `chatcmpl-${payload.responseId}`;
    }
    this.started = true;
    const events: string[] = [];
    const candidates = Array.isArray(payload.candidates) ? (payload.candidates as unknown[]) : [];
    candidates.forEach((candidate, position) => events.push(...this.candidateEvents(candidate, position)));
    this.reported = usageOf(payload.usageMetadata) ?? this.reported;
    const states = [...this.candidates.values()];
    const allFinished = states.length > 0 && states.every((state) => state.finished);
    // Usage comes with the last event; Gemini may answer fewer candidates than asked.
    if (allFinished && (states.length >= this.n || isRecord(payload.usageMetadata))) {
      this.done = true;
      events.push(...this.usageChunks(this.reported));
    }
    return events;
  }

  private candidateEvents(candidate: unknown, position: number): string[] {
    const index = candidateIndex(candidate, position);
    const events: string[] = [];
    let state = this.candidates.get(index);
    if (!state) {
      state = { toolCalls: 0, finished: false };
      this.candidates.set(index, state);
      events.push(this.chunk({ index, delta: { role: 'assistant', content: '' }, finish_reason: null }));
    }
    const { text, toolCalls } = contentOf(candidate, state.toolCalls);
    if (text !== '') {
      this.delivered.add(text);
      events.push(this.chunk({ index, delta: { content: text }, finish_reason: null }));
    }
    if (toolCalls.length) {
      state.toolCalls += toolCalls.length;
      this.delivered.add(JSON.stringify(toolCalls));
      events.push(this.chunk({ index, delta: { tool_calls: toolCalls }, finish_reason: null }));
    }
    const finish = finishReason(candidate, state.toolCalls > 0);
    if (finish && !state.finished) {
      state.finished = true;
      events.push(this.chunk({ index, delta: {}, finish_reason: finish }));
    }
    return events;
  }

  usage(): TokenUsage | null {
    return this.done ? this.reported : null;
  }
}
