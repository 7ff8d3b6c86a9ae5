import { rawJsonOf } from 'src/common/http/json-body';
import { TokenUsage } from 'src/modules/billing/metering.types';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import {
  generatedText,
  isRecord,
  ProviderAdapter,
  StreamTranslator,
  UpstreamErrorDetails,
  UpstreamRequest,
  usageFrom,
  wireUsage,
} from 'src/modules/relay/upstream/provider-adapter';
import { DeliveredTokens } from 'src/modules/relay/upstream/delivered-tokens';
import { saysAccountCannotServe } from 'src/modules/relay/upstream/upstream-error-text';
import { eventData } from 'src/modules/relay/upstream/sse-event-splitter';
import { splicedBody } from 'src/modules/relay/upstream/relayed-body';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { withFields } from 'src/common/with-fields';

/**
 * OpenAI-compatible upstreams speak our wire format already: the body is relayed as sent, with
 * `model` set to the upstream's name for it, and answers come back with our model id.
 */
export class OpenAiAdapter implements ProviderAdapter {
  buildRequest(route: CatalogRoute, body: Record<string, unknown>, chat: ChatRequest): UpstreamRequest {
    // Billing needs the upstream's exact count; the usage chunk is hidden again unless the client asked.
    const streamOptions = chat.stream
      ? withFields(isRecord(body.stream_options) ? body.stream_options : {}, { include_usage: true })
      : null;
    const raw = rawJsonOf(body);
    // The client's own bytes when they can be relayed safely (relayed-body.ts), else a re-serialisation.
    const payload =
      (raw && splicedBody(raw, route.upstreamModel, streamOptions)) ??
      JSON.stringify(
        withFields(
          body,
          streamOptions
            ? { model: route.upstreamModel, stream_options: streamOptions }
            : { model: route.upstreamModel },
        ),
      );
    return {
      path: '/chat/completions',
      headers: { authorization: `Bearer ${route.channel.apiKey}`, 'content-type': 'application/json' },
      payload,
    };
  }

  toCompletion(upstream: unknown, modelId: string): Record<string, unknown> | null {
    if (!isRecord(upstream) || !Array.isArray(upstream.choices)) {
      return null;
    }
    upstream.model = modelId;
    return upstream;
  }

  streamTranslator(route: CatalogRoute, chat: ChatRequest): StreamTranslator {
    return new OpenAiStreamTranslator(route.upstreamModel, chat.model.id, chat.includeUsage);
  }

  errorDetails(upstream: unknown): UpstreamErrorDetails | null {
    const error = isRecord(upstream) ? upstream.error : undefined;
    if (!isRecord(error) || typeof error.message !== 'string') {
      return null;
    }
    return {
      message: error.message,
      param: typeof error.param === 'string' ? error.param : null,
      // insufficient_quota, billing_not_active, invalid_api_key, account_deactivated, access_terminated…
      channelCannotServe: saysAccountCannotServe(error.code, error.type, error.message),
    };
  }
}

/** What differs between OpenAI's streams of chat chunks and of legacy text completions. */
export interface OpenAiStreamDialect {
  /** The `object` of the stream's chunks, for a usage chunk the gateway makes. */
  chunkObject: string;
  /** The generated text of one chunk's choices, for billing when the upstream reports no usage. */
  textOf(choices: unknown): string;
}

const CHAT_STREAM_DIALECT: OpenAiStreamDialect = {
  chunkObject: 'chat.completion.chunk',
  textOf: (choices) => generatedText(choices, 'delta'),
};

const USAGE_NULL = ',"usage":null';
// A first chunk is a few hundred characters; one longer than this gives its id at once instead.
const FIRST_CHUNK_KEPT_CHARS = 4096;

interface StreamId {
  id: unknown;
  created: unknown;
}
// Most answers end below it, with usage, and are never parsed; a longer one costs at most this much.
const RETAINED_CHARS = 256 * 1024;

/** Relays an OpenAI-compatible stream: the model id swapped back to ours, the usage read and hidden unless asked for. */
export class OpenAiStreamTranslator implements StreamTranslator {
  private reported: TokenUsage | null = null;
  private done = false;
  private readonly upstreamModelField: string;
  private readonly modelField: string;
  /**
   * Data payloads kept for counting only if the upstream never reports usage; dropped once it does.
   * Past RETAINED_CHARS they are counted and dropped, so a long stream's memory stays flat, and a short
   * one (almost always followed by usage) is never parsed.
   */
  private retained: string[] | null = [];
  private retainedChars = 0;
  private readonly delivered = new DeliveredTokens();
  /**
   * The id and time of the stream's first data chunk, for a usage chunk the gateway adds. Kept as the
   * chunk's text and parsed only then, which is rare (the upstream reports usage), instead of on every
   * stream; a chunk longer than FIRST_CHUNK_KEPT_CHARS is parsed at once, so that an upstream's huge
   * first chunk is not held for the stream's life.
   */
  private streamId: StreamId | string | null = null;

  constructor(
    upstreamModel: string,
    modelId: string,
    private readonly clientWantsUsage: boolean,
    private readonly dialect: OpenAiStreamDialect = CHAT_STREAM_DIALECT,
  ) {
    this.upstreamModelField = `"model":${JSON.stringify(upstreamModel)}`;
    this.modelField = `"model":${JSON.stringify(modelId)}`;
  }

  // Chunks are forwarded as text: only the model name is swapped, and only the usage chunk is parsed.
  translate(event: string): string[] {
    const data = eventData(event);
    if (data === '[DONE]') {
      this.done = true;
      return [];
    }
    if (data === null) {
      return [event];
    }
    let forwarded = event.replace(this.upstreamModelField, this.modelField);
    if (data.includes('"usage":{')) {
      const parsed: unknown = JSON.parse(data);
      const usage = usageFrom(isRecord(parsed) ? parsed.usage : undefined);
      if (usage) {
        this.reported = usage;
        this.retained = null;
        const usageOnly = isRecord(parsed) && Array.isArray(parsed.choices) && parsed.choices.length === 0;
        if (usageOnly && !this.clientWantsUsage) {
          return [];
        }
      }
    } else if (!this.clientWantsUsage && forwarded.includes(USAGE_NULL)) {
      forwarded = forwarded.replace(USAGE_NULL, '');
    }
    if (this.retained) {
      this.retained.push(data);
      this.retainedChars += data.length;
      if (this.retainedChars > RETAINED_CHARS) {
        this.countRetained();
      }
    }
    this.streamId ??= data.length <= FIRST_CHUNK_KEPT_CHARS ? data : idOf(data);
    return [forwarded];
  }

  usageEvent(usage: TokenUsage): string {
    const streamId = typeof this.streamId === 'string' ? idOf(this.streamId) : this.streamId;
    const chunk = {
      id: streamId?.id,
      object: this.dialect.chunkObject,
      created: streamId?.created ?? Math.floor(Date.now() / 1000),
      model: JSON.parse(this.modelField.slice('"model":'.length)) as string,
      choices: [],
      usage: wireUsage(usage),
    };
    return `data: ${JSON.stringify(chunk)}`;
  }

  usage(): TokenUsage | null {
    return this.reported;
  }

  finished(): boolean {
    return this.done;
  }

  deliveredTokens(): number {
    this.countRetained();
    return this.delivered.total();
  }

  private countRetained(): void {
    for (const data of this.retained ?? []) {
      try {
        const chunk: unknown = JSON.parse(data);
        this.delivered.add(this.dialect.textOf(isRecord(chunk) ? chunk.choices : undefined));
      } catch {
        // a malformed chunk carried no countable text
      }
    }
    this.retained &&= [];
    this.retainedChars = 0;
  }
}

function idOf(data: string): StreamId | null {
  try {
    const chunk: unknown = JSON.parse(data);
    return isRecord(chunk) ? { id: chunk.id, created: chunk.created } : null;
  } catch {
    return null;
  }
}
