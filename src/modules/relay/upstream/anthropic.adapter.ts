import { TokenUsage } from 'src/modules/billing/metering.types';
import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import {
  checkMessageContent,
  outputFormatOf,
  refuseUnsupported,
  thinkingOf,
  toolChoiceOf,
} from 'src/modules/relay/upstream/anthropic-request-rules';
import { countIn, isRecord, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import * as wire from 'src/modules/relay/upstream/translation';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { withFields } from 'src/common/with-fields';

const API_VERSION = '2023-06-01';
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** Anthropic's Messages API behind our wire format: requests and answers are translated both ways. */
export class AnthropicAdapter extends wire.TranslatingAdapter {
  buildRequest(route: CatalogRoute, body: wire.Json, chat: ChatRequest): UpstreamRequest {
    if (chat.n > 1) {
      throw ApiError.invalid(`n > 1 is not supported by the model '${chat.model.id}'.`, 'n');
    }
    refuseUnsupported(body);
    checkMessageContent(body.messages);
    // What the hold covers: thinking counts in it, and it is never raised.
    const maxTokens = chat.maxTokens ?? chat.model.maxOutputTokens;
    const thinking = thinkingOf(body, maxTokens);
    const output = outputFormatOf(body);
    const messages = (body.messages as wire.Message[]).filter((m) => m.role !== 'system' && m.role !== 'developer');
    const system = systemOf(
      (body.messages as wire.Message[]).filter((m) => m.role === 'system' || m.role === 'developer'),
      output && 'instruction' in output ? output.instruction : undefined,
    );
    const request: wire.Json = {
      model: route.upstreamModel,
      max_tokens: maxTokens,
      messages: mergeTurns(messages.map((message, i) => toAnthropicMessage(message, `messages[${i}]`))),
      stream: chat.stream,
      ...(system ? { system } : {}),
      ...(thinking ? { thinking } : {}),
      ...(output && 'format' in output ? { output_config: { format: output.format } } : {}),
      ...samplingAndTools(body),
    };
    return {
      path: '/messages',
      headers: {
        'x-api-key': route.channel.apiKey,
        'anthropic-version': API_VERSION,
        'content-type': 'application/json',
      },
      payload: JSON.stringify(request),
    };
  }

  toCompletion(upstream: unknown, modelId: string): wire.Json | null {
    if (!isRecord(upstream) || upstream.type !== 'message' || !Array.isArray(upstream.content)) {
      return null;
    }
    let text = '';
    const toolCalls: wire.Json[] = [];
    for (const block of upstream.content as unknown[]) {
      if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') {
        text += block.text;
      } else if (isRecord(block) && block.type === 'tool_use') {
        const fn = { name: block.name, arguments: JSON.stringify(block.input ?? {}) };
        toolCalls.push({ id: block.id, type: 'function', function: fn });
      }
    }
    const message: wire.Json = { role: 'assistant', content: text === '' && toolCalls.length ? null : text };
    if (toolCalls.length) {
      message.tool_calls = toolCalls;
    }
    const usage = usageOf(upstream.usage);
    const choice = { index: 0, message, logprobs: null, finish_reason: finishReason(upstream.stop_reason) };
    return wire.completion(`chatcmpl-${String(upstream.id)}`, modelId, 'fp_anthropic', [choice], usage);
  }

  billedUsage(upstream: unknown): TokenUsage | null {
    return isRecord(upstream) ? usageOf(upstream.usage) : null;
  }

  streamTranslator(_route: CatalogRoute, chat: ChatRequest): wire.TranslatingStreamTranslator {
    return new AnthropicStreamTranslator(chat.model.id, chat.includeUsage);
  }
}

/** The sampling settings, stop sequences, end user and tools, each only when the client set it. */
function samplingAndTools(body: wire.Json): wire.Json {
  const fields: wire.Json = {};
  // Anthropic's temperature runs 0..1; ours (OpenAI's) 0..2.
  if (typeof body.temperature === 'number') {
    fields.temperature = Math.min(body.temperature, 1);
  }
  if (typeof body.top_p === 'number') {
    fields.top_p = body.top_p;
  }
  const stop = wire.stopSequences(body.stop);
  if (stop) {
    fields.stop_sequences = stop;
  }
  if (typeof body.user === 'string') {
    fields.metadata = { user_id: body.user };
  }
  const tools = toolsOf(body.tools);
  if (tools.length > 0) {
    fields.tools = tools;
    fields.tool_choice = toolChoiceOf(body);
  }
  return fields;
}

function toAnthropicMessage(message: wire.Message, at: string): { role: 'user' | 'assistant'; content: wire.Json[] } {
  if (message.role === 'tool' || message.role === 'function') {
    const result = {
      type: 'tool_result',
      tool_use_id: wire.stringField(message.tool_call_id) || wire.stringField(message.name),
      content: wire.textOf(message.content),
    };
    return { role: 'user', content: [withCacheControl(result, { cacheControl: wire.cacheControlOf(message) })] };
  }
  const content: wire.Json[] = wire.partsOf(message.content).map((part) => withCacheControl(block(part), part));
  for (const call of wire.toolCallsOf(message, at)) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
  }
  markLast(content, message);
  return { role: message.role === 'assistant' ? 'assistant' : 'user', content };
}

function block(part: wire.Part): wire.Json {
  if (part.kind === 'text') {
    return { type: 'text', text: part.text };
  }
  const inline = wire.dataUri(part.url);
  return inline
    ? { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } }
    : { type: 'image', source: { type: 'url', url: part.url } };
}

/**
 * Prompt caching: a client's `cache_control` breakpoints reach Anthropic where it put them, on a
 * content part, on a message (its last block, as LiteLLM and others take it), or on a tool.
 */
function withCacheControl(target: wire.Json, source: { cacheControl?: wire.Json }): wire.Json {
  return source.cacheControl ? withFields(target, { cache_control: source.cacheControl }) : target;
}

function markLast(blocks: wire.Json[], message: wire.Message): void {
  const cacheControl = wire.cacheControlOf(message);
  if (cacheControl && blocks.length > 0) {
    blocks[blocks.length - 1] = withFields(blocks[blocks.length - 1], { cache_control: cacheControl });
  }
}

/**
 * The system prompt: one string, or text blocks when a breakpoint must stay on one of them. The
 * gateway's own instruction (a JSON answer) comes last, after every breakpoint, so the client's
 * cached prefix stays the same.
 */
function systemOf(messages: wire.Message[], instruction?: string): string | wire.Json[] {
  const blocks = messages.flatMap((message) => {
    const text = wire.partsOf(message.content).flatMap((part) => (part.kind === 'text' ? [part] : []));
    const mapped = text.map((part) => withCacheControl({ type: 'text', text: part.text }, part));
    markLast(mapped, message);
    return mapped;
  });
  if (blocks.some((b) => b.cache_control)) {
    return instruction ? [...blocks, { type: 'text', text: instruction }] : blocks;
  }
  const texts = messages.map((m) => wire.textOf(m.content));
  return [...texts, ...(instruction ? [instruction] : [])].join('\n\n');
}

function toolsOf(tools: unknown): wire.Json[] {
  return (Array.isArray(tools) ? (tools as unknown[]) : []).flatMap((tool) =>
    wire
      .functionTools([tool])
      .map((fn) =>
        withCacheControl(
          { name: fn.name, description: fn.description, input_schema: fn.parameters },
          { cacheControl: wire.cacheControlOf(tool) },
        ),
      ),
  );
}

/** Anthropic wants strictly alternating turns: consecutive messages of one role become one. */
function mergeTurns(messages: { role: 'user' | 'assistant'; content: wire.Json[] }[]) {
  const merged: typeof messages = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last && last.role === message.role) {
      last.content.push(...message.content);
    } else {
      merged.push({ role: message.role, content: [...message.content] });
    }
  }
  return merged;
}

const finishReason = (reason: unknown) => FINISH_REASONS[String(reason)] ?? 'stop';

/**
 * Anthropic's input_tokens leave out what the cache served or stored; OpenAI's prompt_tokens count
 * them, so ours do too: cached_tokens are the cache reads, and the cache writes are kept for pricing.
 * Thinking tokens are in output_tokens; they are reasoning tokens when Anthropic counts them apart
 * (`output_tokens_details.thinking_tokens`), and unknown otherwise.
 */
export function usageOf(usage: unknown): TokenUsage | null {
  if (!isRecord(usage) || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number') {
    return null;
  }
  const cachedTokens = countIn(usage, 'cache_read_input_tokens') ?? 0;
  const cacheWriteTokens = countIn(usage, 'cache_creation_input_tokens') ?? 0;
  const counted: TokenUsage = {
    promptTokens: usage.input_tokens + cachedTokens + cacheWriteTokens,
    completionTokens: usage.output_tokens,
    cachedTokens,
    cacheWriteTokens,
  };
  const reasoningTokens = thinkingTokensOf(usage);
  if (reasoningTokens !== undefined) {
    counted.reasoningTokens = Math.min(reasoningTokens, usage.output_tokens);
  }
  return counted;
}

const thinkingTokensOf = (usage: wire.Json) => countIn(usage.output_tokens_details, 'thinking_tokens');

/** Anthropic's event stream (message_start, content_block_*, message_delta, message_stop) as our chunks. */
class AnthropicStreamTranslator extends wire.TranslatingStreamTranslator {
  /** The prompt's usage from message_start (completionTokens there is a placeholder). */
  private prompt: TokenUsage | null = null;
  /** Anthropic reports output tokens in message_delta; until then usage is unknown (an aborted stream is counted). */
  private completionTokens: number | null = null;
  private reasoningTokens: number | undefined;
  private readonly toolIndexByBlock = new Map<number, number>();

  protected translatePayload(payload: wire.Json): string[] {
    switch (payload.type) {
      case 'message_start':
        return this.start(payload.message);
      case 'content_block_start':
        return this.blockStart(payload);
      case 'content_block_delta':
        return this.blockDelta(payload);
      case 'message_delta':
        return this.finish(payload);
      case 'message_stop':
        this.done = true;
        return this.usageChunks(this.usage());
      case 'error':
        throw new Error(`upstream stream error: ${JSON.stringify(payload.error)}`);
      default:
        return [];
    }
  }

  private start(message: unknown): string[] {
    if (isRecord(message)) {
      this.base.id = `chatcmpl-${String(message.id)}`;
      this.prompt = isRecord(message.usage) ? usageOf({ output_tokens: 0, ...message.usage }) : null;
    }
    return [this.chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null })];
  }

  private blockStart(payload: wire.Json): string[] {
    const block = isRecord(payload.content_block) ? payload.content_block : {};
    if (block.type !== 'tool_use') {
      return [];
    }
    const toolIndex = this.toolIndexByBlock.size;
    this.toolIndexByBlock.set(Number(payload.index), toolIndex);
    const call = { index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } };
    return [this.chunk({ delta: { tool_calls: [call] }, finish_reason: null })];
  }

  private blockDelta(payload: wire.Json): string[] {
    const delta = isRecord(payload.delta) ? payload.delta : {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string') {
      this.delivered.add(delta.text);
      return [this.chunk({ delta: { content: delta.text }, finish_reason: null })];
    }
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
      // Never shown, but billed as output by Anthropic: a stream cut before its usage still counts it.
      this.delivered.add(delta.thinking);
      return [];
    }
    // Anthropic opens each tool input with an empty piece: nothing to relay.
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
      this.delivered.add(delta.partial_json);
      const call = {
        index: this.toolIndexByBlock.get(Number(payload.index)) ?? 0,
        function: { arguments: delta.partial_json },
      };
      return [this.chunk({ delta: { tool_calls: [call] }, finish_reason: null })];
    }
    return [];
  }

  private finish(payload: wire.Json): string[] {
    if (isRecord(payload.usage) && typeof payload.usage.output_tokens === 'number') {
      this.completionTokens = payload.usage.output_tokens;
      this.reasoningTokens = thinkingTokensOf(payload.usage);
    }
    const reason = isRecord(payload.delta) ? payload.delta.stop_reason : undefined;
    return [this.chunk({ delta: {}, finish_reason: finishReason(reason) })];
  }

  usage(): TokenUsage | null {
    if (this.prompt === null || this.completionTokens === null) {
      return null;
    }
    const usage: TokenUsage = withFields(this.prompt, { completionTokens: this.completionTokens });
    if (this.reasoningTokens !== undefined) {
      usage.reasoningTokens = Math.min(this.reasoningTokens, this.completionTokens);
    }
    return usage;
  }
}
