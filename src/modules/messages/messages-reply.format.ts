import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { PassThrough, ReplyFormat, StreamWriter } from 'src/modules/relay/reply-format';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { completionToMessage } from 'src/modules/messages/anthropic-message';
import { AnthropicHeaders, anthropicPassThrough } from 'src/modules/messages/anthropic-pass-through';
import { MessagesStreamWriter } from 'src/modules/messages/messages-stream';

/** What the client sent, relayed as it came to the routes whose channel speaks Anthropic's API. */
export interface MessagesClientRequest {
  body: Record<string, unknown>;
  headers: AnthropicHeaders;
}

/**
 * The relay's answers as Anthropic's Messages API gives them: chat answers reshaped, except on
 * Anthropic channels, where the client's request and the provider's answer pass through untranslated.
 */
export class MessagesReplyFormat implements ReplyFormat {
  constructor(
    private readonly model: string,
    private readonly client: MessagesClientRequest,
  ) {}

  answer(completion: Record<string, unknown>): unknown {
    return completionToMessage(completion, this.model);
  }

  streamWriter(): StreamWriter {
    return new MessagesStreamWriter(this.model);
  }

  passThrough(route: CatalogRoute, chat: ChatRequest): PassThrough | null {
    if (route.channel.type !== 'anthropic') {
      return null;
    }
    return anthropicPassThrough(this.client.body, this.client.headers, this.model, route, chat);
  }
}
