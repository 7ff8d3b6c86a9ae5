import { ErrorBody } from 'src/common/errors/api-error';
import { TokenUsage } from 'src/modules/billing/metering.types';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { StreamTranslator, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import { CatalogRoute } from 'src/modules/models/catalog.service';

/**
 * How a relayed answer reaches the client. The relay produces chat completions (a
 * `chat.completion`, or `chat.completion.chunk` events); a format reshapes them on the way out, so
 * another wire format (the Responses API) reuses routing, failover, the stream relay and metering
 * instead of copying them. The one exception is a format's pass-through (below), whose provider
 * answers in the client's own format already.
 */
export interface ReplyFormat {
  /** The JSON body for a complete `chat.completion` whose usage is filled in. */
  answer(completion: Record<string, unknown>): unknown;
  /** A writer for one stream. */
  streamWriter(): StreamWriter;
  /**
   * For a format whose client speaks a provider's own API: on a route to a channel of that provider,
   * the request and answer that pass through untranslated (`answer`/`streamWriter` are then unused).
   * Null on other routes, which are translated; asked per route, so one model's routes may mix both.
   */
  passThrough?(route: CatalogRoute, chat: ChatRequest): PassThrough | null;
}

/** Turns the chat chunk events of one stream into the text the client receives. */
export interface StreamWriter {
  /** The client's text for these chat events, each framed (`data: …`) without its blank line. */
  write(events: string[]): string;
  /** The last text of a stream that finished normally. */
  end(): string;
  /** The last text of a stream cut short after the client got its first bytes; `error` says why. */
  fail(error: ErrorBody): string;
}

/** Where the translated chat events go: the client's wire format (chat chunks, or reshaped). */
export interface RelayOutput {
  translator: StreamTranslator;
  writer: StreamWriter;
}

/**
 * A client speaking a provider's own API, on a route to a channel of that provider: its request goes
 * upstream as it came (the route's model swapped in) and the answer comes back as the provider gave
 * it. Routing, failover, the breaker, the timeouts, the hold and metering stay the relay's; only the
 * translation both ways is skipped, so nothing the chat format cannot carry is lost.
 */
export interface PassThrough {
  request: UpstreamRequest;
  /** The upstream's JSON answer as the client gets it, with what to bill; null when it is not a valid answer. */
  answer(upstream: unknown): PassedAnswer | null;
  /** For one stream: a translator that forwards the upstream's events while counting, and the client's writer. */
  stream(): RelayOutput;
}

export interface PassedAnswer {
  /** Usage as the upstream reported it, or null. */
  usage: TokenUsage | null;
  /** Tokens of the generated text in the answer, billed when the upstream reported no usage. */
  deliveredTokens: () => number;
  /** The body to send, given the usage billed (shown when the upstream left its own out). */
  body(billed: TokenUsage): unknown;
}

/** The chat-completions format (ChatCompletionChunkDto): events as they are, `data: [DONE]`, or an error event. */
export const CHAT_REPLY_FORMAT: ReplyFormat = {
  answer: (completion) => completion,
  streamWriter: () => ({
    write: (events) => {
      let out = '';
      for (const event of events) {
        out += `${event}\n\n`;
      }
      return out;
    },
    end: () => 'data: [DONE]\n\n',
    fail: (error) => `data: ${JSON.stringify(error)}\n\n`,
  }),
};
