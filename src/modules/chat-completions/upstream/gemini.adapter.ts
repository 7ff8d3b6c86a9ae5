import { TokenUsage } from 'src/modules/billing/metering.types';
import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { countIn, isRecord, UpstreamRequest } from 'src/modules/chat-completions/upstream/provider-adapter';
import * as wire from 'src/modules/chat-completions/upstream/translation';
import { CatalogRoute } from 'src/modules/models/catalog.service';

const CONTENT_FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** Google's Gemini generateContent API behind our wire format. */
export class GeminiAdapter extends wire.TranslatingAdapter {
  buildRequest(route: CatalogRoute, body: wire.Json, chat: ChatRequest): UpstreamRequest {
    const all = body.messages as wire.Message[];
    const system = all.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => wire.textOf(m.content));
    const request: wire.Json = {
      contents: all
        .filter((m) => m.role !== 'system' && m.role !== 'developer')
        .map((message, i) => toGeminiContent(message, `messages[${i}]`, all)),
      generationConfig: generationConfig(body, chat),
    };
    if (system.length > 0) {
      request.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
    }
    const tools = wire.functionTools(body.tools);
    if (tools.length > 0 && body.tool_choice !== 'none') {
      request.tools = [{ functionDeclarations: tools }];
    }
    const model = encodeURIComponent(route.upstreamModel);
    return {
      path: chat.stream ? `/models/${model}:streamGenerateContent?alt=sse` : `/models/${model}:generateContent`,
      headers: { 'x-goog-api-key': route.channel.apiKey, 'content-type': 'application/json' },
      payload: JSON.stringify(request),
    };
  }

  toCompletion(upstream: unknown, modelId: string): wire.Json | null {
    if (!isRecord(upstream) || !Array.isArray(upstream.candidates)) {
      return null;
    }
    const choices = (upstream.candidates as unknown[]).map((candidate, i) => {
      const { text, toolCalls } = contentOf(candidate);
      const message: wire.Json = { role: 'assistant', content: text === '' && toolCalls.length ? null : text };
      if (toolCalls.length) {
        message.tool_calls = toolCalls;
      }
      const index = isRecord(candidate) && typeof candidate.index === 'number' ? candidate.index : i;
      return { index, message, logprobs: null, finish_reason: finishReason(candidate, toolCalls.length > 0) };
    });
    const usage = usageOf(upstream.usageMetadata);
    const id = `chatcmpl-${typeof upstream.responseId === 'string' ? upstream.responseId : wire.unixNow()}`;
    return wire.completion(id, modelId, 'fp_gemini', choices, usage);
  }

  streamTranslator(_route: CatalogRoute, chat: ChatRequest): wire.TranslatingStreamTranslator {
    return new GeminiStreamTranslator(chat.model.id, chat.includeUsage);
  }
}

function generationConfig(body: wire.Json, chat: ChatRequest): wire.Json {
  const config: wire.Json = { candidateCount: chat.n };
  if (chat.maxTokens !== null) {
    config.maxOutputTokens = chat.maxTokens;
  }
  const fields: [string, string][] = [
    ['temperature', 'temperature'],
    ['top_p', 'topP'],
    ['presence_penalty', 'presencePenalty'],
    ['frequency_penalty', 'frequencyPenalty'],
    ['seed', 'seed'],
  ];
  for (const [ours, theirs] of fields) {
    if (typeof body[ours] === 'number') {
      config[theirs] = body[ours];
    }
  }
  const stop = wire.stopSequences(body.stop);
  if (stop) {
    config.stopSequences = stop;
  }
  return config;
}

function toGeminiContent(message: wire.Message, at: string, all: wire.Message[]): wire.Json {
  if (message.role === 'tool' || message.role === 'function') {
    const name = toolNameFor(wire.stringField(message.tool_call_id), all) ?? (wire.stringField(message.name) || 'tool');
    return {
      role: 'user',
      parts: [{ functionResponse: { name, response: { content: wire.textOf(message.content) } } }],
    };
  }
  const parts: wire.Json[] = wire.partsOf(message.content).map((part) => {
    if (part.kind === 'text') {
      return { text: part.text };
    }
    const inline = wire.dataUri(part.url);
    return inline
      ? { inline_data: { mime_type: inline.mediaType, data: inline.data } }
      : { file_data: { file_uri: part.url, mime_type: mimeTypeOf(part.url) } };
  });
  for (const call of wire.toolCallsOf(message, at)) {
    parts.push({ functionCall: { name: call.name, args: call.arguments } });
  }
  if (parts.length === 0) {
    throw ApiError.invalid(`${at}.content must not be empty for this model.`, `${at}.content`);
  }
  return { role: message.role === 'assistant' ? 'model' : 'user', parts };
}

/** Gemini answers a function by its name; our tool messages name the call id, so look the call up. */
function toolNameFor(callId: string, all: wire.Message[]): string | null {
  for (const message of all) {
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
    for (const call of calls) {
      if (isRecord(call) && call.id === callId && isRecord(call.function) && typeof call.function.name === 'string') {
        return call.function.name;
      }
    }
  }
  return null;
}

function mimeTypeOf(url: string): string {
  const extension = /\.(\w+)(?:[?#].*)?$/.exec(url)?.[1]?.toLowerCase();
  const known: Record<string, string> = { png: 'image/png', gif: 'image/gif', webp: 'image/webp' };
  return (extension && known[extension]) ?? 'image/jpeg';
}

function contentOf(candidate: unknown): { text: string; toolCalls: wire.Json[] } {
  const parts =
    isRecord(candidate) && isRecord(candidate.content) && Array.isArray(candidate.content.parts)
      ? candidate.content.parts
      : [];
  let text = '';
  const toolCalls: wire.Json[] = [];
  for (const part of parts as unknown[]) {
    if (isRecord(part) && typeof part.text === 'string' && part.thought !== true) {
      text += part.text;
    } else if (isRecord(part) && isRecord(part.functionCall)) {
      const fn = { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) };
      toolCalls.push({ id: `call_${toolCalls.length}`, type: 'function', function: fn });
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

/** Gemini's SSE stream (whole candidate snapshots, no [DONE]) as our chunks. */
class GeminiStreamTranslator extends wire.TranslatingStreamTranslator {
  private started = false;
  private reported: TokenUsage | null = null;

  protected translatePayload(payload: wire.Json): string[] {
    if (isRecord(payload.error)) {
      throw new Error(`upstream stream error: ${JSON.stringify(payload.error)}`);
    }
    const events: string[] = [];
    if (!this.started) {
      this.started = true;
      if (typeof payload.responseId === 'string') {
        this.base.id = `chatcmpl-${payload.responseId}`;
      }
      events.push(this.chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }));
    }
    const candidate = Array.isArray(payload.candidates) ? (payload.candidates as unknown[])[0] : undefined;
    const { text, toolCalls } = contentOf(candidate);
    if (text !== '') {
      this.delivered.add(text);
      events.push(this.chunk({ delta: { content: text }, finish_reason: null }));
    }
    if (toolCalls.length) {
      const calls = toolCalls.map((call, index) => ({ index, ...call }));
      this.delivered.add(JSON.stringify(calls));
      events.push(this.chunk({ delta: { tool_calls: calls }, finish_reason: null }));
    }
    this.reported = usageOf(payload.usageMetadata) ?? this.reported;
    const finish = finishReason(candidate, toolCalls.length > 0);
    if (finish) {
      this.done = true;
      events.push(this.chunk({ delta: {}, finish_reason: finish }));
      events.push(...this.usageChunks(this.reported));
    }
    return events;
  }

  usage(): TokenUsage | null {
    return this.done ? this.reported : null;
  }
}
