import { ApiError } from 'src/common/errors/api-error';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isAbsent = (value: unknown) => value === undefined || value === null;

/**
 * Anthropic fields with no chat counterpart: left out of the chat body (docs/messages.md says why), so
 * only an Anthropic channel, which gets the client's body as it came, receives them. `top_k` has no
 * place in chat; `thinking` asks for reasoning blocks a chat answer cannot carry back; `service_tier`
 * is the provider's business.
 */
const DROPPED_FIELDS = new Set(['top_k', 'thinking', 'service_tier']);
/** Chat-completions names a Messages body must not carry: the translation writes them. */
const CHAT_ONLY_FIELDS = new Set([
  'n',
  'stop',
  'user',
  'max_completion_tokens',
  'response_format',
  'stream_options',
  'logprobs',
  'functions',
  'function_call',
  'parallel_tool_calls',
  'reasoning_effort',
]);
/** Read and rewritten by the translation. Other fields go to the chat body unread, as on the chat route. */
const TRANSLATED_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'stream',
  'metadata',
  ...DROPPED_FIELDS,
]);

/** A chat validator's `param` in the Messages API's own names (the chat body is ours, the client never saw it). */
const CHAT_TO_MESSAGES_PARAM: Record<string, string> = {
  max_tokens: 'max_tokens',
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  tool_choice: 'tool_choice',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
};

export function messagesParam(chatParam: string): string | null {
  if (chatParam in CHAT_TO_MESSAGES_PARAM) {
    return CHAT_TO_MESSAGES_PARAM[chatParam];
  }
  // Messages were checked here, and the chat list is reindexed (system, tool results): no honest index to give.
  return chatParam.startsWith('messages') ? 'messages' : chatParam;
}

const invalid = (param: string, problem: string) => ApiError.invalid(`${param}: ${problem}`, param);

/**
 * Translates a `POST /v1/messages` body (Anthropic's Messages API) to the chat-completions body every
 * channel type serves. Shapes are checked here, naming the Anthropic field (`messages.0.content: …`);
 * model, bounds and the model's kind are then checked by the chat validator on admission. Fields
 * this gateway does not know are relayed to the upstream unread, as on the chat route.
 */
export function translateMessagesRequest(body: unknown): Json {
  if (!isObject(body)) {
    throw ApiError.invalid('The request body must be a JSON object.');
  }
  const chat: Json = {};
  for (const [field, value] of Object.entries(body)) {
    if (CHAT_ONLY_FIELDS.has(field)) {
      throw invalid(field, 'Extra inputs are not permitted (a chat-completions parameter, not a Messages one).');
    }
    if (!TRANSLATED_FIELDS.has(field) && value !== undefined) {
      chat[field] = value;
    }
  }
  if (typeof body.model !== 'string' || body.model === '') {
    throw invalid('model', 'Field required: a model id string.');
  }
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    throw invalid('max_tokens', 'Field required: an integer of at least 1.');
  }
  checkDropped(body);
  chat.model = body.model;
  chat.max_tokens = body.max_tokens;
  chat.messages = [...systemMessages(body.system), ...conversation(body.messages)];
  if (!isAbsent(body.stop_sequences)) {
    const stop = body.stop_sequences;
    if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) {
      throw invalid('stop_sequences', 'Input should be a list of strings.');
    }
    if (stop.length > 0) {
      chat.stop = stop;
    }
  }
  copyNumber(body, chat, 'temperature', 0, 1);
  copyNumber(body, chat, 'top_p', 0, 1);
  if (!isAbsent(body.metadata)) {
    if (!isObject(body.metadata)) {
      throw invalid('metadata', 'Input should be an object.');
    }
    const userId = body.metadata.user_id;
    if (!isAbsent(userId) && typeof userId !== 'string') {
      throw invalid('metadata.user_id', 'Input should be a string.');
    }
    // The end-user the per-user limits count, as `user` is on chat.
    if (typeof userId === 'string' && userId !== '') {
      chat.user = userId;
    }
  }
  const tools = toolsOf(body.tools);
  if (tools.length > 0) {
    chat.tools = tools;
  }
  Object.assign(chat, toolChoiceOf(body.tool_choice, tools.length > 0));
  if (!isAbsent(body.stream)) {
    if (typeof body.stream !== 'boolean') {
      throw invalid('stream', 'Input should be a valid boolean.');
    }
    chat.stream = body.stream;
    // message_delta carries the usage: the chat relay must always end with it.
    if (body.stream) {
      chat.stream_options = { include_usage: true };
    }
  }
  return chat;
}

/** Dropped fields are still checked, so a typo there is an error and not a silent no-op. */
function checkDropped(body: Json): void {
  if (!isAbsent(body.top_k) && (!Number.isInteger(body.top_k) || (body.top_k as number) < 0)) {
    throw invalid('top_k', 'Input should be a non-negative integer.');
  }
  const thinking = body.thinking;
  if (
    !isAbsent(thinking) &&
    (!isObject(thinking) || !['enabled', 'disabled', 'adaptive'].includes(thinking.type as string))
  ) {
    throw invalid('thinking.type', "Input should be 'enabled', 'disabled' or 'adaptive'.");
  }
  if (!isAbsent(body.service_tier) && typeof body.service_tier !== 'string') {
    throw invalid('service_tier', 'Input should be a string.');
  }
}

function copyNumber(body: Json, chat: Json, field: string, min: number, max: number): void {
  const value = body[field];
  if (isAbsent(value)) {
    return;
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(field, `Input should be a number from ${min} to ${max}.`);
  }
  chat[field] = value;
}

function systemMessages(system: unknown): Json[] {
  if (isAbsent(system)) {
    return [];
  }
  if (typeof system === 'string') {
    return system === '' ? [] : [{ role: 'system', content: system }];
  }
  if (!Array.isArray(system)) {
    throw invalid('system', 'Input should be a string or a list of text blocks.');
  }
  const text = system
    .map((block: unknown, i) => {
      if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') {
        throw invalid(`system.${i}`, "Input should be a text block ({ type: 'text', text }).");
      }
      return block.text;
    })
    .join('\n\n');
  return text === '' ? [] : [{ role: 'system', content: text }];
}

function conversation(messages: unknown): Json[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalid('messages', 'Field required: a non-empty list of messages.');
  }
  return messages.flatMap((message: unknown, i) => {
    const at = `messages.${i}`;
    if (!isObject(message)) {
      throw invalid(at, 'Input should be an object with role and content.');
    }
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw invalid(`${at}.role`, "Input should be 'user' or 'assistant'.");
    }
    const blocks = contentBlocks(message.content, `${at}.content`);
    return message.role === 'user' ? userTurn(blocks, at) : [assistantTurn(blocks, at)];
  });
}

function contentBlocks(content: unknown, at: string): Json[] {
  if (typeof content === 'string') {
    return [{ type: 'text', text: content }];
  }
  if (!Array.isArray(content)) {
    throw invalid(at, 'Input should be a string or a list of content blocks.');
  }
  return content.map((block: unknown, i) => {
    if (!isObject(block) || typeof block.type !== 'string') {
      throw invalid(`${at}.${i}`, 'Input should be a content block with a type.');
    }
    return block;
  });
}

/** A user turn: its tool results become `tool` messages (first, as chat wants them), the rest one user message. */
function userTurn(blocks: Json[], at: string): Json[] {
  const results: Json[] = [];
  const parts: Json[] = [];
  blocks.forEach((block, i) => {
    const place = `${at}.content.${i}`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: textOf(block, place) });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: imageUrl(block.source, `${place}.source`) } });
        break;
      case 'document':
        parts.push({ type: 'text', text: documentText(block.source, `${place}.source`) });
        break;
      case 'tool_result':
        results.push(toolResult(block, place));
        break;
      default:
        throw invalid(
          `${place}.type`,
          "Input should be 'text', 'image', 'document' or 'tool_result' in a user message.",
        );
    }
  });
  if (parts.length === 0) {
    return results;
  }
  const onlyText = parts.every((part) => part.type === 'text');
  const content = onlyText ? parts.map((part) => part.text).join('') : parts;
  return [...results, { role: 'user', content }];
}

function assistantTurn(blocks: Json[], at: string): Json {
  let text = '';
  const toolCalls: Json[] = [];
  blocks.forEach((block, i) => {
    const place = `${at}.content.${i}`;
    switch (block.type) {
      case 'text':
        text += textOf(block, place);
        break;
      case 'tool_use':
        toolCalls.push(toolCall(block, place));
        break;
      // Earlier reasoning is the provider's own record; no channel type takes it back through chat.
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw invalid(`${place}.type`, "Input should be 'text', 'tool_use' or 'thinking' in an assistant message.");
    }
  });
  const message: Json = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls;
  }
  return message;
}

function textOf(block: Json, at: string): string {
  if (typeof block.text !== 'string') {
    throw invalid(`${at}.text`, 'Input should be a string.');
  }
  return block.text;
}

function imageUrl(source: unknown, at: string): string {
  if (!isObject(source)) {
    throw invalid(at, 'Input should be an image source object.');
  }
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !/^image\/[a-z0-9.+-]+$/i.test(source.media_type)) {
      throw invalid(`${at}.media_type`, "Input should be an image media type such as 'image/png'.");
    }
    if (typeof source.data !== 'string' || source.data === '') {
      throw invalid(`${at}.data`, 'Input should be base64 image data.');
    }
    return `data:${source.media_type};base64,${source.data}`;
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string' || !/^https?:\/\//i.test(source.url)) {
      throw invalid(`${at}.url`, 'Input should be an http(s) URL.');
    }
    return source.url;
  }
  throw invalid(`${at}.type`, "Input should be 'base64' or 'url'.");
}

/**
 * A plain-text document's text: what the chat body carries, and what the hold counts (an Anthropic
 * channel gets the document block itself). PDF, URL and file documents are refused: their tokens
 * cannot be known before the upstream reads them, and the hold must be an upper bound.
 */
function documentText(source: unknown, at: string): string {
  if (!isObject(source)) {
    throw invalid(at, 'Input should be a document source object.');
  }
  if (source.type === 'text') {
    if (source.media_type !== 'text/plain') {
      throw invalid(`${at}.media_type`, "Input should be 'text/plain'.");
    }
    if (typeof source.data !== 'string') {
      throw invalid(`${at}.data`, 'Input should be a string.');
    }
    return source.data;
  }
  if (source.type === 'content') {
    const content = typeof source.content === 'string' ? [{ type: 'text', text: source.content }] : source.content;
    if (!Array.isArray(content)) {
      throw invalid(`${at}.content`, 'Input should be a string or a list of text blocks.');
    }
    return content.map((block: unknown, i) => textOf(isObject(block) ? block : {}, `${at}.content.${i}`)).join('\n\n');
  }
  throw invalid(`${at}.type`, "Input should be 'text' or 'content': PDF, URL and file documents are not supported.");
}

function toolCall(block: Json, at: string): Json {
  if (typeof block.id !== 'string' || block.id === '') {
    throw invalid(`${at}.id`, 'Input should be a tool use id string.');
  }
  if (typeof block.name !== 'string' || block.name === '') {
    throw invalid(`${at}.name`, 'Input should be a tool name string.');
  }
  if (!isObject(block.input)) {
    throw invalid(`${at}.input`, 'Input should be an object.');
  }
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } };
}

/** A tool result's content as the text a chat `tool` message carries; `is_error` is said in words. */
function toolResult(block: Json, at: string): Json {
  if (typeof block.tool_use_id !== 'string' || block.tool_use_id === '') {
    throw invalid(`${at}.tool_use_id`, 'Input should be a tool use id string.');
  }
  let text: string;
  if (isAbsent(block.content)) {
    text = '';
  } else if (typeof block.content === 'string') {
    text = block.content;
  } else if (Array.isArray(block.content)) {
    text = block.content
      .map((part: unknown, i) => {
        if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
          // Chat's tool messages carry text only: an image here could not reach any channel type.
          throw invalid(`${at}.content.${i}`, 'Input should be a text block: tool results carry text here.');
        }
        return part.text;
      })
      .join('');
  } else {
    throw invalid(`${at}.content`, 'Input should be a string or a list of text blocks.');
  }
  if (block.is_error === true) {
    text = `Error: ${text}`;
  }
  return { role: 'tool', tool_call_id: block.tool_use_id, content: text };
}

function toolsOf(tools: unknown): Json[] {
  if (isAbsent(tools)) {
    return [];
  }
  if (!Array.isArray(tools)) {
    throw invalid('tools', 'Input should be a list of tools.');
  }
  return tools.map((tool: unknown, i) => {
    const at = `tools.${i}`;
    if (!isObject(tool)) {
      throw invalid(at, 'Input should be a tool object.');
    }
    // Anthropic's server tools (web search, bash, computer use…) run at Anthropic; no other channel has them.
    if (!isAbsent(tool.type) && tool.type !== 'custom') {
      throw invalid(`${at}.type`, 'Only custom tools (name, description, input_schema) are supported.');
    }
    if (typeof tool.name !== 'string' || tool.name === '') {
      throw invalid(`${at}.name`, 'Field required: a tool name string.');
    }
    if (!isAbsent(tool.description) && typeof tool.description !== 'string') {
      throw invalid(`${at}.description`, 'Input should be a string.');
    }
    if (!isObject(tool.input_schema)) {
      throw invalid(`${at}.input_schema`, 'Field required: a JSON Schema object.');
    }
    const fn: Json = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') {
      fn.description = tool.description;
    }
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown, hasTools: boolean): Json {
  if (isAbsent(choice)) {
    return {};
  }
  if (!isObject(choice)) {
    throw invalid('tool_choice', 'Input should be an object with a type.');
  }
  const out: Json = {};
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      if (typeof choice.name !== 'string' || choice.name === '') {
        throw invalid('tool_choice.name', 'Field required: the name of a tool.');
      }
      out.tool_choice = { type: 'function', function: { name: choice.name } };
      break;
    default:
      throw invalid('tool_choice.type', "Input should be 'auto', 'any', 'tool' or 'none'.");
  }
  if (out.tool_choice !== 'none' && out.tool_choice !== 'auto' && !hasTools) {
    throw invalid('tool_choice', 'A tool choice that requires a tool needs tools.');
  }
  if (!hasTools) {
    return {};
  }
  if (choice.disable_parallel_tool_use === true && out.tool_choice !== 'none') {
    out.parallel_tool_calls = false;
  }
  return out;
}

/**
 * The prompt tokens of the earlier turns' thinking blocks (a body `translateMessagesRequest` accepted):
 * the chat body drops them, an Anthropic channel receives them. 0 when there are none.
 */
export function replayedThinkingTokens(body: Json): number {
  let text = '';
  for (const message of body.messages as Json[]) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) {
      continue;
    }
    for (const block of message.content as Json[]) {
      const value = block.type === 'thinking' ? block.thinking : block.type === 'redacted_thinking' ? block.data : '';
      text += typeof value === 'string' ? `${value}\n` : '';
    }
  }
  return text === '' ? 0 : estimatePromptTokens([{ role: 'assistant', content: text }]);
}
