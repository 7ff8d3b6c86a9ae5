import { anthropicStreamError } from 'src/common/errors/anthropic-error';
import { ErrorBody } from 'src/common/errors/api-error';
import { TokenUsage } from 'src/modules/billing/metering.types';
import { RelayOutput, StreamWriter } from 'src/modules/relay/reply-format';
import { usageOf as anthropicTokenUsage } from 'src/modules/relay/upstream/anthropic.adapter';
import { DeliveredTokens } from 'src/modules/relay/upstream/delivered-tokens';
import { isRecord, StreamTranslator } from 'src/modules/relay/upstream/provider-adapter';
import { eventData } from 'src/modules/relay/upstream/sse-event-splitter';
import { withFields } from 'src/common/with-fields';

type Json = Record<string, unknown>;

/** The text a content block or delta generates: what a client received, counted when a stream is cut. */
export function generatedTextOf(part: unknown): string {
  if (!isRecord(part)) {
    return '';
  }
  for (const field of ['text', 'thinking', 'partial_json']) {
    if (typeof part[field] === 'string') {
      return part[field];
    }
  }
  return part.type === 'tool_use' || part.type === 'server_tool_use' ? JSON.stringify(part.input ?? {}) : '';
}

/**
 * One Anthropic stream relayed to an Anthropic client: every event is forwarded as it came (only
 * `message_start` is rewritten, to show the gateway's model id), while the usage events and the
 * delivered text are counted for billing exactly as a translated stream's are.
 */
export class PassThroughStream implements StreamTranslator {
  /** Usage fields as reported so far: message_start's, then message_delta's (cumulative) over them. */
  private readonly reported: Json = {};
  private outputReported = false;
  private done = false;
  /** The upstream's own `error` event reached the client: the relay's closing error would be a second one. */
  private errorRelayed = false;
  private readonly delivered = new DeliveredTokens();

  constructor(private readonly modelShown: string) {}

  output(): RelayOutput {
    return { translator: this, writer: this.writer() };
  }

  translate(event: string): string[] {
    const data = eventData(event);
    if (data === null) {
      return [event];
    }
    // Not JSON: the stream is broken (the relay ends it with an error event), as on translated routes.
    const payload: unknown = JSON.parse(data);
    if (!isRecord(payload)) {
      return [event];
    }
    switch (payload.type) {
      case 'message_start':
        return [this.start(payload)];
      case 'content_block_start':
      case 'content_block_delta':
        this.delivered.add(generatedTextOf(payload.content_block ?? payload.delta));
        break;
      case 'message_delta':
        this.count(payload.usage);
        break;
      case 'message_stop':
        this.done = true;
        break;
      case 'error':
        this.errorRelayed = true;
        break;
    }
    return [event];
  }

  usage(): TokenUsage | null {
    return this.outputReported ? anthropicTokenUsage(this.reported) : null;
  }

  finished(): boolean {
    return this.done;
  }

  deliveredTokens(): number {
    return this.delivered.total();
  }

  /** Never asked for: the relay adds no usage event to a provider's own stream, which carries its usage. */
  usageEvent(): string {
    return '';
  }

  private start(payload: Json): string {
    const message = isRecord(payload.message) ? payload.message : {};
    if (isRecord(message.usage)) {
      // message_start's output_tokens is a placeholder: usage stays unknown until message_delta.
      const { output_tokens: _placeholder, ...input } = message.usage;
      Object.assign(this.reported, input);
    }
    return frame('message_start', withFields(payload, { message: withFields(message, { model: this.modelShown }) }));
  }

  private count(usage: unknown): void {
    if (!isRecord(usage)) {
      return;
    }
    Object.assign(this.reported, usage);
    this.outputReported ||= typeof usage.output_tokens === 'number';
  }

  private writer(): StreamWriter {
    return {
      write: (events) => events.map((event) => `${event}\n\n`).join(''),
      end: () => '',
      fail: (error: ErrorBody) =>
        this.errorRelayed ? '' : frame('error', anthropicStreamError(error.error.message, error.error.code)) + '\n\n',
    };
  }
}

function frame(type: string, payload: object): string {
  return `event: ${type}\ndata: ${JSON.stringify(payload)}`;
}
