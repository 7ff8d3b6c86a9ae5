/**
 * The request contract of POST /v1/chat/completions (docs/errors.md, "Limits"; docs/compatibility.md): the
 * vocabulary and bounds that
 * validateChatRequest enforces and the OpenAPI DTOs document. Both read them from here, so neither can name
 * a role, part type or bound the other lacks; chat-request.contract.spec.ts fails if they drift anyway.
 */

/** The roles a client is offered, in the order a refused role lists them. */
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'developer', 'tool'] as const;
/** Still accepted from clients written before tools, but not offered: a refused role does not list it. */
export const LEGACY_MESSAGE_ROLES = ['function'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number] | (typeof LEGACY_MESSAGE_ROLES)[number];
export const ACCEPTED_MESSAGE_ROLES: readonly MessageRole[] = [...MESSAGE_ROLES, ...LEGACY_MESSAGE_ROLES];

/** Content part types; a message of any role may carry any of them. */
export const CONTENT_PART_TYPES = ['text', 'image_url', 'input_audio', 'file', 'refusal'] as const;
export type ContentPartType = (typeof CONTENT_PART_TYPES)[number];

/** Tiers other than these make the upstream charge more than the model's prices. */
export const SERVICE_TIERS = ['auto', 'default'] as const;

// Far beyond any real request (OpenAI allows 128 tools, schemas 5 levels deep), and small enough that
// walking a body, and serializing it for the upstream, stays cheap and cannot exhaust the stack.
export const MAX_NESTING_DEPTH = 64;
export const MAX_JSON_VALUES = 50_000;

/**
 * The top-level fields the gateway reads, with their OpenAPI types, bounds and defaults. Any other field
 * (tools, response_format, seed, …) is relayed to the upstream unread.
 */
export const REQUEST_FIELDS = {
  model: { type: 'string' },
  messages: { type: 'array', minItems: 1 },
  temperature: { type: 'number', minimum: 0, maximum: 2, default: 1 },
  top_p: { type: 'number', minimum: 0, maximum: 1, default: 1 },
  presence_penalty: { type: 'number', minimum: -2, maximum: 2, default: 0 },
  frequency_penalty: { type: 'number', minimum: -2, maximum: 2, default: 0 },
  n: { type: 'integer', minimum: 1, maximum: 128, default: 1 },
  // Without a maximum of their own: the model's maxOutputTokens bounds both.
  max_tokens: { type: 'integer', minimum: 1 },
  max_completion_tokens: { type: 'integer', minimum: 1 },
  stream: { type: 'boolean', default: false },
  stream_options: { type: 'object' },
  // A string, or an array of at most this many strings.
  stop: { maxItems: 4 },
  user: { type: 'string', maxLength: 512 },
  service_tier: { type: 'string' },
} as const;

type RequestFields = typeof REQUEST_FIELDS;
export type RequestField = keyof RequestFields;
/** The fields of one OpenAPI type, e.g. the numbers checkNumber may be given. */
export type RequestFieldOfType<T extends string> = {
  [K in RequestField]: RequestFields[K] extends { type: T } ? K : never;
}[RequestField];
