import { ErrorBody } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { PassThrough } from 'src/modules/chat-completions/pass-through';
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

/** The chat-completions format, as SPEC 6 frames it: events as they are, `data: [DONE]`, or an error event. */
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
