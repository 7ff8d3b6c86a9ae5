import { TokenUsage } from 'src/modules/billing/metering.types';
import { UpstreamErrorDetails, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import { EmbeddingRequest } from 'src/modules/embeddings/embedding-request.validator';
import { CatalogRoute } from 'src/modules/models/catalog.service';

/** An answer in OpenAI's shape (`object: list` of `embedding` objects), and the usage the upstream reported. */
export interface EmbeddingAnswer {
  list: Record<string, unknown> & { data: Record<string, unknown>[] };
  usage: TokenUsage | null;
}

/** What differs between upstream families for embeddings: the request they take and the answer they give. */
export interface EmbeddingAdapter {
  buildRequest(route: CatalogRoute, body: Record<string, unknown>, request: EmbeddingRequest): UpstreamRequest;
  /** The upstream's JSON answer in OpenAI's shape for our model id, or null if it is not a valid answer. */
  toAnswer(upstream: unknown, request: EmbeddingRequest): EmbeddingAnswer | null;
  errorDetails(upstream: unknown): UpstreamErrorDetails | null;
}

/** Little-endian float32 bytes in base64: what OpenAI answers for `encoding_format: base64`. */
export function float32Base64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** One OpenAI embedding object, encoded as the client asked. */
export function embeddingObject(index: number, values: number[], request: EmbeddingRequest) {
  return {
    object: 'embedding',
    index,
    embedding: request.encodingFormat === 'base64' ? float32Base64(values) : values,
  };
}

export const isFloatVector = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'number');
