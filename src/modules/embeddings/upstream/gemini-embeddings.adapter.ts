import { GeminiAdapter } from 'src/modules/relay/upstream/gemini.adapter';
import { isRecord, UpstreamErrorDetails, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import { EmbeddingRequest } from 'src/modules/embeddings/embedding-request.validator';
import {
  EmbeddingAdapter,
  EmbeddingAnswer,
  embeddingObject,
  isFloatVector,
} from 'src/modules/embeddings/upstream/embedding-adapter';
import { CatalogRoute } from 'src/modules/models/catalog.service';

/**
 * Gemini's `batchEmbedContents`: one request per input (text only: routing keeps token ids away),
 * `dimensions` as `outputDimensionality`. Gemini answers floats and no usage: the gateway encodes
 * base64 itself, and billing falls back to the estimate it held.
 */
export class GeminiEmbeddingsAdapter implements EmbeddingAdapter {
  private readonly errors = new GeminiAdapter();

  buildRequest(route: CatalogRoute, _body: Record<string, unknown>, request: EmbeddingRequest): UpstreamRequest {
    const model = `models/${route.upstreamModel}`;
    const requests = request.inputs.map((input) => ({
      model,
      content: { parts: [{ text: input }] },
      ...(request.dimensions === null ? {} : { outputDimensionality: request.dimensions }),
    }));
    return {
      path: `/models/${encodeURIComponent(route.upstreamModel)}:batchEmbedContents`,
      headers: { 'x-goog-api-key': route.channel.apiKey, 'content-type': 'application/json' },
      payload: JSON.stringify({ requests }),
    };
  }

  toAnswer(upstream: unknown, request: EmbeddingRequest): EmbeddingAnswer | null {
    const embeddings = isRecord(upstream) ? upstream.embeddings : undefined;
    if (!Array.isArray(embeddings) || embeddings.length !== request.inputs.length) {
      return null;
    }
    const data: Record<string, unknown>[] = [];
    for (const [index, embedding] of (embeddings as unknown[]).entries()) {
      const values = isRecord(embedding) ? embedding.values : undefined;
      if (!isFloatVector(values)) {
        return null;
      }
      data.push(embeddingObject(index, values, request));
    }
    return { list: { object: 'list', data, model: request.model.id }, usage: null };
  }

  errorDetails(upstream: unknown): UpstreamErrorDetails | null {
    return this.errors.errorDetails(upstream);
  }
}
