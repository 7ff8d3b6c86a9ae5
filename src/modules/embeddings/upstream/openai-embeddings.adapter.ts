import { TokenUsage } from 'src/modules/billing/metering.types';
import { OpenAiAdapter } from 'src/modules/relay/upstream/openai.adapter';
import { isRecord, UpstreamErrorDetails, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import { EmbeddingRequest } from 'src/modules/embeddings/embedding-request.validator';
import {
  EmbeddingAdapter,
  EmbeddingAnswer,
  embeddingObject,
  isFloatVector,
} from 'src/modules/embeddings/upstream/embedding-adapter';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { withFields } from 'src/common/with-fields';

/**
 * OpenAI-compatible upstreams speak our format: the body is relayed as sent with `model` set to the
 * upstream's name, and the answer comes back with our model id. A compatible server that ignores
 * `encoding_format: base64` and answers floats gets them encoded by the gateway.
 */
export class OpenAiEmbeddingsAdapter implements EmbeddingAdapter {
  private readonly errors = new OpenAiAdapter();

  buildRequest(route: CatalogRoute, body: Record<string, unknown>): UpstreamRequest {
    return {
      path: '/embeddings',
      headers: { authorization: `Bearer ${route.channel.apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(withFields(body, { model: route.upstreamModel })),
    };
  }

  toAnswer(upstream: unknown, request: EmbeddingRequest): EmbeddingAnswer | null {
    if (!isRecord(upstream) || !Array.isArray(upstream.data) || upstream.data.length !== request.inputs.length) {
      return null;
    }
    const data: Record<string, unknown>[] = [];
    for (const [i, item] of (upstream.data as unknown[]).entries()) {
      if (!isRecord(item)) {
        return null;
      }
      const index = typeof item.index === 'number' ? item.index : i;
      if (request.encodingFormat === 'base64' && isFloatVector(item.embedding)) {
        data.push(embeddingObject(index, item.embedding, request));
      } else if (typeof item.embedding === 'string' || isFloatVector(item.embedding)) {
        data.push(item);
      } else {
        return null;
      }
    }
    const list = withFields(upstream, { object: 'list', data, model: request.model.id });
    return { list, usage: usageOf(upstream.usage) };
  }

  errorDetails(upstream: unknown): UpstreamErrorDetails | null {
    return this.errors.errorDetails(upstream);
  }
}

/** Embeddings bill input only: `prompt_tokens` (OpenAI sends no completion_tokens here). */
function usageOf(usage: unknown): TokenUsage | null {
  const prompt = isRecord(usage) ? usage.prompt_tokens : undefined;
  return typeof prompt === 'number' && Number.isInteger(prompt) && prompt >= 0
    ? { promptTokens: prompt, completionTokens: 0 }
    : null;
}
