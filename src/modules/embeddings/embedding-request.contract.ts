/**
 * The request contract of POST /v1/embeddings: the bounds validateEmbeddingRequest enforces and the
 * OpenAPI DTO documents, read by both from here.
 */

/** OpenAI's own bounds: 2048 inputs a request, 8192 tokens an input, 300k tokens a request. */
export const MAX_EMBEDDING_INPUTS = 2048;
export const MAX_TOKENS_PER_INPUT = 8192;
/** The most input tokens one request may hold, as the gateway estimates them (with its 10% margin). */
export const MAX_EMBEDDING_REQUEST_TOKENS = 300_000;
/** Gemini's batchEmbedContents takes at most 100 requests: larger batches skip Gemini routes. */
export const MAX_GEMINI_BATCH = 100;
/** Far above any model's output size (3072 for the largest today). */
export const MAX_DIMENSIONS = 65_536;
export const ENCODING_FORMATS = ['float', 'base64'] as const;
export type EncodingFormat = (typeof ENCODING_FORMATS)[number];
/** Token ids are vocabulary indexes: non-negative integers, far below this. */
export const MAX_TOKEN_ID = 2 ** 31 - 1;
