import { ChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { CatalogRoute } from 'src/modules/models/catalog.service';

export interface UpstreamRequest {
  path: string;
  headers: Record<string, string>;
  payload: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** Turns one upstream stream event into the wire events to forward (already framed text, without the blank line). */
export interface StreamTranslator {
  translate(event: string): string[];
  /** Usage the upstream reported in the stream so far, if any. */
  usage(): TokenUsage | null;
  /** Whether the upstream signalled the normal end of the stream. */
  finished(): boolean;
}

/** What differs between upstream families: the request they take and the answers they give. */
export interface ProviderAdapter {
  buildRequest(route: CatalogRoute, body: Record<string, unknown>, chat: ChatRequest): UpstreamRequest;
  /** The upstream's JSON answer as a `chat.completion` object for `modelId`, or null if it is not a valid answer. */
  toCompletion(upstream: unknown, modelId: string): Record<string, unknown> | null;
  streamTranslator(route: CatalogRoute, modelId: string): StreamTranslator;
  /** The message and param of an upstream error body, for client errors relayed as 400. */
  errorDetails(upstream: unknown): { message: string; param: string | null } | null;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function usageFrom(value: unknown): TokenUsage | null {
  if (!isRecord(value) || typeof value.prompt_tokens !== 'number' || typeof value.completion_tokens !== 'number') {
    return null;
  }
  return { promptTokens: value.prompt_tokens, completionTokens: value.completion_tokens };
}
