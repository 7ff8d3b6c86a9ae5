import { anthropicStreamError } from 'src/common/errors/anthropic-error';
import { ErrorBody } from 'src/common/errors/api-error';
import { StreamWriter } from 'src/modules/relay/reply-format';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { eventData } from 'src/modules/relay/upstream/sse-event-splitter';
import { anthropicUsage, newMessageId, stopReason, toolUseId } from 'src/modules/messages/anthropic-message';

type Json = Record<string, unknown>;

/** The content block receiving deltas: text, or the tool call with this chat index. */
type OpenBlock = { kind: 'text' } | { kind: 'tool_use'; callIndex: number };

/**
 * Writes a stream of chat chunks as Anthropic's named events: `message_start`; per block
 * `content_block_start`, `content_block_delta` (`text_delta` / `input_json_delta`), `content_block_stop`;
 * then `message_delta` with the stop reason and usage, and `message_stop`. A stream cut short ends
 * with an `error` event.
 */
export class MessagesStreamWriter implements StreamWriter {
  private readonly id = newMessageId();
  private started = false;
  private over = false;
  private blockIndex = -1;
  private open: OpenBlock | null = null;
  private readonly seenCalls = new Set<number>();
  private finishReason: unknown = null;
  private usage: unknown = null;

  constructor(private readonly model: string) {}

  write(events: string[]): string {
    let out = this.start();
    for (const event of events) {
      if (this.over) {
        break;
      }
      const chunk = parseChunk(event);
      if (chunk === 'comment') {
        out += `${event}\n\n`;
      } else if (chunk && isRecord(chunk.error)) {
        const error = chunk.error;
        out += this.fail({
          error: {
            message: typeof error.message === 'string' ? error.message : 'The upstream provider failed.',
            type: 'server_error',
            param: null,
            code: typeof error.code === 'string' ? error.code : null,
          },
        });
      } else if (chunk) {
        out += this.chunk(chunk);
      }
    }
    return out;
  }

  end(): string {
    if (this.over) {
      return '';
    }
    this.over = true;
    const usage = anthropicUsage(this.usage);
    return (
      this.start() +
      this.closeBlock() +
      event('message_delta', {
        delta: { stop_reason: stopReason(this.finishReason), stop_sequence: null },
        usage,
      }) +
      event('message_stop', {})
    );
  }

  fail(error: ErrorBody): string {
    if (this.over) {
      return '';
    }
    this.over = true;
    return this.start() + event('error', { ...anthropicStreamError(error.error.message, error.error.code) });
  }

  private start(): string {
    if (this.started) {
      return '';
    }
    this.started = true;
    const message = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Known only at the end (message_delta carries it); chat chunks do not say it up front.
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return event('message_start', { message });
  }

  private chunk(chunk: Json): string {
    let out = '';
    if (isRecord(chunk.usage)) {
      this.usage = chunk.usage;
    }
    const choice = Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : null;
    const delta = choice && isRecord(choice.delta) ? choice.delta : {};
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text === 'string' && text !== '') {
        out += this.textDelta(text);
      }
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls as unknown[]) {
        out += isRecord(call) ? this.toolCallDelta(call) : '';
      }
    }
    if (choice && typeof choice.finish_reason === 'string') {
      this.finishReason = choice.finish_reason;
    }
    return out;
  }

  private textDelta(text: string): string {
    let out = '';
    if (this.open?.kind !== 'text') {
      out += this.openBlock({ kind: 'text' }, { type: 'text', text: '' });
    }
    return out + event('content_block_delta', { index: this.blockIndex, delta: { type: 'text_delta', text } });
  }

  private toolCallDelta(call: Json): string {
    let out = '';
    const callIndex = typeof call.index === 'number' ? call.index : 0;
    const fn = isRecord(call.function) ? call.function : {};
    if (!this.seenCalls.has(callIndex)) {
      this.seenCalls.add(callIndex);
      const name = typeof fn.name === 'string' ? fn.name : '';
      out += this.openBlock(
        { kind: 'tool_use', callIndex },
        { type: 'tool_use', id: toolUseId(call.id), name, input: {} },
      );
    }
    const open = this.open;
    // A late fragment of an earlier call cannot be placed once another block opened; chat sends calls in order.
    if (open?.kind !== 'tool_use' || open.callIndex !== callIndex) {
      return out;
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      out += event('content_block_delta', {
        index: this.blockIndex,
        delta: { type: 'input_json_delta', partial_json: fn.arguments },
      });
    }
    return out;
  }

  private openBlock(block: OpenBlock, contentBlock: Json): string {
    const out = this.closeBlock();
    this.blockIndex += 1;
    this.open = block;
    return out + event('content_block_start', { index: this.blockIndex, content_block: contentBlock });
  }

  private closeBlock(): string {
    if (!this.open) {
      return '';
    }
    this.open = null;
    return event('content_block_stop', { index: this.blockIndex });
  }
}

function event(type: string, fields: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
}

/** A chat event's JSON object; 'comment' for a keep-alive; null for anything else (`[DONE]`, garbage). */
function parseChunk(event: string): Json | 'comment' | null {
  if (event.startsWith(':')) {
    return 'comment';
  }
  const data = eventData(event);
  if (data === null || data === '[DONE]') {
    return null;
  }
  try {
    const parsed: unknown = JSON.parse(data);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
