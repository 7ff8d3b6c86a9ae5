import { ApiError } from 'src/common/errors/api-error';
import { inputToMessages } from 'src/modules/responses/responses-input';
import { withFields } from 'src/common/with-fields';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isAbsent = (value: unknown) => value === undefined || value === null;

/** What a Responses API answer repeats of its request (the `response` object's request fields). */
export interface ResponseEcho {
  model: string;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  reasoning: { effort: string | null; summary: string | null };
  temperature: number | null;
  text: Json;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  truncation: string;
  user: string | null;
  /** Whether this answer's output items are kept for later `item_reference`s (docs/responses.md). */
  store: boolean;
}

/** A Responses API request translated: the chat-completions body that is admitted and relayed, and the echo. */
export interface TranslatedRequest {
  chatBody: Json;
  echo: ResponseEcho;
}

/** Fields that need state this gateway does not keep (it stores no request content, only answers' output). */
const STATEFUL_FIELDS = ['previous_response_id', 'conversation', 'prompt'] as const;
/** Responses fields with no chat counterpart, accepted and not relayed (docs/responses.md says why for each). */
const DROPPED_FIELDS = [
  'store',
  'include',
  'truncation',
  'stream_options',
  'top_logprobs',
  'max_tool_calls',
  'background',
  'metadata',
];
/** Chat-completions names that a Responses body must not carry: the translation writes them. */
const CHAT_ONLY_FIELDS = new Set([
  'messages',
  'n',
  'max_tokens',
  'max_completion_tokens',
  'response_format',
  'reasoning_effort',
  'verbosity',
  'functions',
  'function_call',
  'logprobs',
]);
/**
 * Read and rewritten by the translation. Every other field (model, temperature, top_p, user, service_tier,
 * parallel_tool_calls, unknown ones) goes into the chat body under its own name and is validated as chat does.
 */
const TRANSLATED_FIELDS = new Set([
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'text',
  'max_output_tokens',
  'reasoning',
  'stream',
]);
const REASONING_EFFORTS: ReadonlySet<string> = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);
const VERBOSITIES: ReadonlySet<string> = new Set(['low', 'medium', 'high']);

/**
 * Translates a `POST /v1/responses` body to the chat-completions body every channel type serves.
 * `item_reference`s were replaced by their items already (StoredResponses); fields that point at the
 * request's own earlier input are refused (400 naming them), since no input is ever kept. `keeping`:
 * whether the deployment keeps answers (RESPONSES_STORE), so the answer's `store` says what happens. Shapes the
 * translation reads are checked here, naming the Responses field; the rest (model, temperature, bounds of
 * max_output_tokens…) is checked by the chat validator, whose `param` responsesParam() maps back.
 * Fields this gateway does not know are relayed to the upstream unread, as on the chat route.
 */
export function translateResponsesRequest(body: unknown, keeping = false): TranslatedRequest {
  if (!isObject(body)) {
    throw ApiError.invalid('The request body must be a JSON object.');
  }
  for (const field of STATEFUL_FIELDS) {
    if (!isAbsent(body[field])) {
      throw ApiError.invalid(
        `${field} is not supported: this gateway never keeps a request's input, only answers' output items. ` +
          "Send the whole conversation in input (earlier answers' items may be sent as item_reference).",
        field,
      );
    }
  }
  if (!isAbsent(body.store) && typeof body.store !== 'boolean') {
    throw ApiError.invalid('store must be a boolean.', 'store');
  }
  if (body.background === true) {
    throw ApiError.invalid('background is not supported: responses are answered in the request.', 'background');
  }
  const chatBody: Json = {};
  for (const [field, value] of Object.entries(body)) {
    if (CHAT_ONLY_FIELDS.has(field)) {
      throw ApiError.invalid(`Unknown parameter: ${field} (a chat-completions parameter, not a Responses one).`, field);
    }
    if (!TRANSLATED_FIELDS.has(field) && !DROPPED_FIELDS.includes(field) && value !== undefined) {
      chatBody[field] = value;
    }
  }
  const instructions = optionalString(body, 'instructions');
  const messages = inputToMessages(body.input);
  chatBody.messages = instructions ? [{ role: 'system', content: instructions }, ...messages] : messages;
  if (!isAbsent(body.max_output_tokens)) {
    chatBody.max_completion_tokens = body.max_output_tokens;
  }
  if (!isAbsent(body.stream)) {
    chatBody.stream = body.stream;
    // The Responses stream ends with the usage: the chat relay must always carry it.
    chatBody.stream_options = body.stream === true ? { include_usage: true } : undefined;
  }
  const tools = toolsOf(body.tools);
  if (tools.length > 0) {
    chatBody.tools = tools;
  }
  if (!isAbsent(body.tool_choice)) {
    chatBody.tool_choice = toolChoiceOf(body.tool_choice);
  }
  const text = textOf(body.text);
  Object.assign(chatBody, text.chat);
  const effort = reasoningEffortOf(body.reasoning);
  if (effort) {
    chatBody.reasoning_effort = effort;
  }
  const echo = echoOf(body, instructions, text.echo, effort);
  echo.store = keeping && body.store !== false;
  return { chatBody: dropUndefined(chatBody), echo };
}

/** The Responses name of a chat-completions parameter a refusal names (`messages[3]…` → `input`). */
export function responsesParam(param: string | null): string | null {
  if (param === null) {
    return null;
  }
  if (param === 'messages' || param.startsWith('messages[')) {
    return 'input';
  }
  const renamed: Record<string, string> = {
    max_completion_tokens: 'max_output_tokens',
    max_tokens: 'max_output_tokens',
    response_format: 'text.format',
    reasoning_effort: 'reasoning.effort',
    verbosity: 'text.verbosity',
    stream_options: 'stream',
  };
  return renamed[param] ?? param;
}

function toolsOf(tools: unknown): Json[] {
  if (isAbsent(tools)) {
    return [];
  }
  if (!Array.isArray(tools)) {
    throw ApiError.invalid('tools must be an array of function tools.', 'tools');
  }
  return tools.map((tool: unknown, i) => {
    if (!isObject(tool) || tool.type !== 'function') {
      const type = isObject(tool) && typeof tool.type === 'string' ? `'${tool.type}'` : 'this entry';
      throw ApiError.invalid(
        `tools[${i}]: only function tools are supported; ${type} is not (hosted tools run at OpenAI, not here).`,
        'tools',
      );
    }
    if (typeof tool.name !== 'string' || tool.name === '') {
      throw ApiError.invalid(`tools[${i}].name must be a non-empty string.`, 'tools');
    }
    if (!isAbsent(tool.parameters) && !isObject(tool.parameters)) {
      throw ApiError.invalid(`tools[${i}].parameters must be a JSON schema object.`, 'tools');
    }
    const fn: Json = { name: tool.name };
    for (const field of ['description', 'parameters', 'strict']) {
      if (!isAbsent(tool[field])) {
        fn[field] = tool[field];
      }
    }
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') {
    return choice;
  }
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') {
    return { type: 'function', function: { name: choice.name } };
  }
  throw ApiError.invalid(
    "tool_choice must be 'auto', 'none', 'required' or { type: 'function', name }.",
    'tool_choice',
  );
}

/** `text.format` as chat's `response_format`, and `text.verbosity` as `verbosity`. */
function textOf(text: unknown): { chat: Json; echo: Json } {
  if (isAbsent(text)) {
    return { chat: {}, echo: { format: { type: 'text' } } };
  }
  if (!isObject(text)) {
    throw ApiError.invalid('text must be an object.', 'text');
  }
  const chat: Json = {};
  const format = text.format ?? { type: 'text' };
  if (!isObject(format)) {
    throw ApiError.invalid('text.format must be an object.', 'text.format');
  }
  if (format.type === 'json_object') {
    chat.response_format = { type: 'json_object' };
  } else if (format.type === 'json_schema') {
    chat.response_format = { type: 'json_schema', json_schema: jsonSchemaOf(format) };
  } else if (format.type !== 'text') {
    throw ApiError.invalid("text.format.type must be 'text', 'json_object' or 'json_schema'.", 'text.format');
  }
  if (!isAbsent(text.verbosity)) {
    if (typeof text.verbosity !== 'string' || !VERBOSITIES.has(text.verbosity)) {
      throw ApiError.invalid("text.verbosity must be 'low', 'medium' or 'high'.", 'text.verbosity');
    }
    chat.verbosity = text.verbosity;
  }
  return { chat, echo: withFields(text, { format }) };
}

function jsonSchemaOf(format: Json): Json {
  if (typeof format.name !== 'string' || format.name === '') {
    throw ApiError.invalid('text.format.name must be a non-empty string.', 'text.format.name');
  }
  if (!isObject(format.schema)) {
    throw ApiError.invalid('text.format.schema must be a JSON schema object.', 'text.format.schema');
  }
  const schema: Json = { name: format.name, schema: format.schema };
  for (const field of ['description', 'strict']) {
    if (!isAbsent(format[field])) {
      schema[field] = format[field];
    }
  }
  return schema;
}

function reasoningEffortOf(reasoning: unknown): string | null {
  if (isAbsent(reasoning)) {
    return null;
  }
  if (!isObject(reasoning)) {
    throw ApiError.invalid('reasoning must be an object.', 'reasoning');
  }
  const effort = reasoning.effort;
  if (isAbsent(effort)) {
    return null;
  }
  if (typeof effort !== 'string' || !REASONING_EFFORTS.has(effort)) {
    throw ApiError.invalid(
      `reasoning.effort must be one of: ${[...REASONING_EFFORTS].join(', ')}.`,
      'reasoning.effort',
    );
  }
  return effort;
}

function echoOf(body: Json, instructions: string | null, text: Json, effort: string | null): ResponseEcho {
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  return {
    model: body.model as string,
    instructions,
    max_output_tokens: number(body.max_output_tokens),
    metadata: metadataOf(body.metadata),
    parallel_tool_calls: body.parallel_tool_calls !== false,
    reasoning: {
      effort,
      summary: isObject(body.reasoning) && typeof body.reasoning.summary === 'string' ? body.reasoning.summary : null,
    },
    temperature: number(body.temperature) ?? 1,
    text,
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? (body.tools as unknown[]) : [],
    top_p: number(body.top_p) ?? 1,
    truncation: typeof body.truncation === 'string' ? body.truncation : 'disabled',
    user: typeof body.user === 'string' ? body.user : null,
    store: false,
  };
}

/** Echoed in the answer only: chat upstreams take metadata only for stored completions. */
function metadataOf(metadata: unknown): Record<string, string> {
  if (isAbsent(metadata)) {
    return {};
  }
  if (!isObject(metadata) || !Object.values(metadata).every((value) => typeof value === 'string')) {
    throw ApiError.invalid('metadata must be an object of string values.', 'metadata');
  }
  return metadata as Record<string, string>;
}

function optionalString(body: Json, field: string): string | null {
  const value = body[field];
  if (isAbsent(value)) {
    return null;
  }
  if (typeof value !== 'string') {
    throw ApiError.invalid(`${field} must be a string.`, field);
  }
  return value;
}

function dropUndefined(body: Json): Json {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}
