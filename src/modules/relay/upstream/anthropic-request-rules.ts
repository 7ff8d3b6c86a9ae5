import { ApiError } from 'src/common/errors/api-error';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { withFields } from 'src/common/with-fields';

/*
 * What of a chat request the Messages API can take, and how: the parameters it cannot honour (each a
 * 400 naming it, never a silent drop), the images it may fetch, the thinking budget that
 * `reasoning_effort` becomes and the structured output that `response_format` becomes. Pure, so
 * each rule is unit-tested; the adapter applies them (docs/providers.md lists them).
 */

type Json = Record<string, unknown>;

const isSet = (value: unknown) => value !== undefined && value !== null;

/**
 * Thinking budgets per `reasoning_effort` (Anthropic's minimum budget is 1,024 tokens). The same
 * steps LiteLLM and others use, so a client moving between gateways gets the same depth.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
};

/** With thinking on, Anthropic takes top_p only from here up to 1 (and no temperature but 1). */
const THINKING_MIN_TOP_P = 0.95;

/** Image types the Messages API reads from a base64 source. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** The instruction that asks for a JSON object: the Messages API's structured output needs a closed schema. */
export const JSON_OBJECT_INSTRUCTION =
  'Answer with one JSON object and nothing else: no text before or after it, no code fence.';

/**
 * Parameters the Messages API has no equivalent for, set to a value that would change the answer:
 * each a 400 naming it. Ignored instead, because nothing the client gets depends on them: `seed`
 * (OpenAI itself promises only best-effort determinism), `prediction` (a latency hint), `store`,
 * `metadata` (OpenAI's stored-completion tags) and `verbosity` (a length hint).
 */
export function refuseUnsupported(body: Json): void {
  const refuse = (param: string, why: string) => {
    throw ApiError.invalid(`${param} is not supported on this model's Anthropic channel: ${why}.`, param);
  };
  if (body.logprobs === true || isSet(body.top_logprobs)) {
    refuse(body.logprobs === true ? 'logprobs' : 'top_logprobs', 'the Messages API returns no log probabilities');
  }
  for (const penalty of ['presence_penalty', 'frequency_penalty']) {
    if (isSet(body[penalty]) && body[penalty] !== 0) {
      refuse(penalty, 'the Messages API has no penalties');
    }
  }
  if (isRecord(body.logit_bias) && Object.keys(body.logit_bias).length > 0) {
    refuse('logit_bias', 'the Messages API takes no token biases');
  }
  if (isSet(body.audio)) {
    refuse('audio', 'Claude answers text only');
  }
  if (Array.isArray(body.modalities) && body.modalities.some((modality) => modality !== 'text')) {
    refuse('modalities', 'Claude answers text only');
  }
  for (const legacy of ['functions', 'function_call']) {
    if (isSet(body[legacy])) {
      refuse(legacy, 'use tools and tool_choice');
    }
  }
  if (isSet(body.web_search_options)) {
    refuse('web_search_options', 'web search is an OpenAI hosted tool');
  }
  if (Array.isArray(body.tools) && body.tools.some((tool) => !isRecord(tool) || tool.type !== 'function')) {
    refuse('tools', 'only function tools are translated');
  }
}

/**
 * Content the translation could not carry: audio and file parts are refused, and image URLs must be
 * https (Anthropic fetches them itself) or a base64 data URI of a type Claude reads.
 */
export function checkMessageContent(messages: unknown): void {
  (Array.isArray(messages) ? messages : []).forEach((message: unknown, i) => {
    const content = isRecord(message) ? message.content : undefined;
    (Array.isArray(content) ? content : []).forEach((part: unknown, j) => {
      const at = `messages[${i}].content[${j}]`;
      const type = isRecord(part) ? part.type : undefined;
      if (type === 'input_audio' || type === 'file') {
        throw ApiError.invalid(`${at}: ${type} parts are not supported on this model's Anthropic channel.`, 'messages');
      }
      if (type === 'image_url' && isRecord(part) && isRecord(part.image_url)) {
        checkImageUrl(String(part.image_url.url), `${at}.image_url.url`);
      }
    });
  });
}

function checkImageUrl(url: string, at: string): void {
  if (url.startsWith('data:')) {
    const mediaType = url.slice('data:'.length, url.indexOf(';'));
    if (!IMAGE_TYPES.has(mediaType)) {
      throw ApiError.invalid(`${at}: Claude reads JPEG, PNG, GIF and WebP images, not ${mediaType}.`, 'messages');
    }
    return;
  }
  if (!url.startsWith('https://')) {
    throw ApiError.invalid(`${at} must be an https URL (Anthropic fetches it) or a base64 data URI.`, 'messages');
  }
}

/**
 * `reasoning_effort` as Anthropic's extended thinking, or null without one (or with 'none').
 * `maxTokens` is what the request asks of Anthropic, thinking included, and what the hold covers: it
 * is never raised past it, so a budget that does not fit under it is a 400, as are the sampling
 * settings and forced tool use that Anthropic refuses beside thinking.
 */
export function thinkingOf(body: Json, maxTokens: number): Json | null {
  const effort = body.reasoning_effort;
  if (!isSet(effort) || effort === 'none') {
    return null;
  }
  if (typeof effort !== 'string' || !Object.hasOwn(THINKING_BUDGETS, effort)) {
    const offered = Object.keys(THINKING_BUDGETS).join(', ');
    throw ApiError.invalid(`reasoning_effort must be one of: none, ${offered}.`, 'reasoning_effort');
  }
  const budget = THINKING_BUDGETS[effort];
  if (maxTokens <= budget) {
    throw ApiError.invalid(
      `reasoning_effort '${effort}' gives Claude ${budget} thinking tokens, which must be fewer than max_tokens ` +
        `(${maxTokens}, thinking included): raise max_tokens or lower reasoning_effort.`,
      'reasoning_effort',
    );
  }
  if (isSet(body.temperature) && body.temperature !== 1) {
    throw ApiError.invalid('temperature must be 1 (or absent) with reasoning_effort on Anthropic.', 'temperature');
  }
  if (typeof body.top_p === 'number' && body.top_p < THINKING_MIN_TOP_P) {
    const message = `top_p must be at least ${THINKING_MIN_TOP_P} with reasoning_effort on Anthropic.`;
    throw ApiError.invalid(message, 'top_p');
  }
  if (body.tool_choice === 'required' || isRecord(body.tool_choice)) {
    throw ApiError.invalid('Anthropic cannot force a tool call while thinking: use tool_choice auto.', 'tool_choice');
  }
  return { type: 'enabled', budget_tokens: budget };
}

/**
 * `response_format` as the Messages API's structured output (`output_config.format`, a JSON schema).
 * Anthropic's schemas must be closed, so `json_object` (any object) is an instruction in the system
 * prompt instead; null for text answers.
 */
export function outputFormatOf(body: Json): { format: Json } | { instruction: string } | null {
  const format = body.response_format;
  if (!isSet(format) || (isRecord(format) && format.type === 'text')) {
    return null;
  }
  if (isRecord(format) && format.type === 'json_object') {
    return { instruction: JSON_OBJECT_INSTRUCTION };
  }
  const schema = isRecord(format) && isRecord(format.json_schema) ? format.json_schema.schema : undefined;
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(schema)) {
    throw ApiError.invalid(
      "response_format must be { type: 'text' }, { type: 'json_object' } or { type: 'json_schema', json_schema: { name, schema } }.",
      'response_format',
    );
  }
  return { format: { type: 'json_schema', schema } };
}

/** Our `tool_choice` and `parallel_tool_calls` as Anthropic's `tool_choice`. */
export function toolChoiceOf(body: Json): Json {
  const choice = body.tool_choice;
  let mapped: Json = { type: 'auto' };
  if (choice === 'none') {
    return { type: 'none' };
  }
  if (choice === 'required') {
    mapped = { type: 'any' };
  } else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    mapped = { type: 'tool', name: choice.function.name };
  }
  return body.parallel_tool_calls === false ? withFields(mapped, { disable_parallel_tool_use: true }) : mapped;
}
