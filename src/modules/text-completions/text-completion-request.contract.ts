/**
 * The request contract of the legacy POST /v1/completions: the bounds validateTextCompletionRequest
 * enforces and the OpenAPI DTO documents, read by both from here. OpenAI's own bounds, except where said.
 */
export const TEXT_COMPLETION_FIELDS = {
  temperature: { minimum: 0, maximum: 2, default: 1 },
  top_p: { minimum: 0, maximum: 1, default: 1 },
  presence_penalty: { minimum: -2, maximum: 2, default: 0 },
  frequency_penalty: { minimum: -2, maximum: 2, default: 0 },
  // 0 is allowed: with `echo` and `logprobs` it scores a prompt without generating anything.
  max_tokens: { minimum: 0, default: 16 },
  n: { minimum: 1, maximum: 128, default: 1 },
  best_of: { minimum: 1, maximum: 20, default: 1 },
  logprobs: { minimum: 0, maximum: 5 },
  seed: { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  logit_bias: { minimum: -100, maximum: 100, maxProperties: 300 },
  stop: { maxItems: 4 },
  user: { maxLength: 512 },
} as const;

/** A batch of prompts answers each one: OpenAI documents no cap; the embeddings' 2048 bounds the work of one request. */
export const MAX_PROMPTS = 2048;
/** Token ids are vocabulary indexes: non-negative integers, far below this. */
export const MAX_TOKEN_ID = 2 ** 31 - 1;
