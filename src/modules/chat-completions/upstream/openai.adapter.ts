import {
  isRecord,
  ProviderAdapter,
  StreamTranslator,
  TokenUsage,
  UpstreamRequest,
  usageFrom,
} from 'src/modules/chat-completions/upstream/provider-adapter';
import { eventData } from 'src/modules/chat-completions/upstream/sse-event-splitter';
import { CatalogRoute } from 'src/modules/models/catalog.service';

/**
 * OpenAI-compatible upstreams speak our wire format already: the body is relayed as sent, with
 * `model` set to the upstream's name for it, and answers come back with our model id.
 */
export class OpenAiAdapter implements ProviderAdapter {
  buildRequest(route: CatalogRoute, body: Record<string, unknown>): UpstreamRequest {
    return {
      path: '/chat/completions',
      headers: { authorization: `Bearer ${route.channel.apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ ...body, model: route.upstreamModel }),
    };
  }

  toCompletion(upstream: unknown, modelId: string): Record<string, unknown> | null {
    if (!isRecord(upstream) || !Array.isArray(upstream.choices)) {
      return null;
    }
    upstream.model = modelId;
    return upstream;
  }

  streamTranslator(route: CatalogRoute, modelId: string): StreamTranslator {
    return new OpenAiStreamTranslator(JSON.stringify(route.upstreamModel), JSON.stringify(modelId));
  }

  errorDetails(upstream: unknown): { message: string; param: string | null } | null {
    const error = isRecord(upstream) ? upstream.error : undefined;
    if (!isRecord(error) || typeof error.message !== 'string') {
      return null;
    }
    return { message: error.message, param: typeof error.param === 'string' ? error.param : null };
  }
}

class OpenAiStreamTranslator implements StreamTranslator {
  private reported: TokenUsage | null = null;
  private done = false;
  private readonly upstreamModelField: string;
  private readonly modelField: string;

  constructor(upstreamModelJson: string, modelJson: string) {
    this.upstreamModelField = `"model":${upstreamModelJson}`;
    this.modelField = `"model":${modelJson}`;
  }

  // Chunks are forwarded as text: only the model name is swapped, and only the usage chunk is parsed.
  translate(event: string): string[] {
    const data = eventData(event);
    if (data === '[DONE]') {
      this.done = true;
    } else if (data !== null && data.includes('"usage":{')) {
      const parsed: unknown = JSON.parse(data);
      this.reported = usageFrom(isRecord(parsed) ? parsed.usage : undefined) ?? this.reported;
    }
    return [event.replace(this.upstreamModelField, this.modelField)];
  }

  usage(): TokenUsage | null {
    return this.reported;
  }

  finished(): boolean {
    return this.done;
  }
}
