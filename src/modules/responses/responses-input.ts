import { ApiError } from 'src/common/errors/api-error';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MESSAGE_ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'developer']);

/**
 * The Responses API's `input` (a string, or a list of items) as chat `messages`. Messages keep their
 * role; a `function_call` item becomes a tool call of an assistant message (consecutive calls share one,
 * as chat clients send them), a `function_call_output` a `tool` message. Reasoning items carry nothing
 * a chat upstream can take and are dropped; an `item_reference` left (none is, where answers are kept)
 * is refused. Every refusal is a 400 naming the item or part, e.g. `input[2].content[0].type`.
 */
export function inputToMessages(input: unknown): Json[] {
  if (input === undefined || input === null) {
    throw ApiError.invalid('Missing required parameter: input.', 'input');
  }
  if (typeof input === 'string') {
    return [{ role: 'user', content: input }];
  }
  if (!Array.isArray(input) || input.length === 0) {
    throw ApiError.invalid('input must be a string or a non-empty array of input items.', 'input');
  }
  const messages: Json[] = [];
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) {
      throw ApiError.invalid(`${at} must be an object.`, at);
    }
    const type = item.type ?? 'message';
    switch (type) {
      case 'message':
        messages.push(messageOf(item, at));
        return;
      case 'function_call':
        addToolCall(messages, item, at);
        return;
      case 'function_call_output':
        messages.push(toolResultOf(item, at));
        return;
      case 'reasoning':
        return;
      case 'item_reference':
        // Replaced by its item before this, unless the deployment keeps no answers (RESPONSES_STORE=false).
        throw ApiError.invalid(
          `${at} refers to a stored item, but this gateway keeps no answers: send the item itself ` +
            '(clients that reuse earlier answers do so when their requests say store: false).',
          `${at}.type`,
        );
      default:
        throw ApiError.invalid(
          `${at}.type must be 'message', 'function_call', 'function_call_output' or 'reasoning'.`,
          `${at}.type`,
        );
    }
  });
  if (messages.length === 0) {
    throw ApiError.invalid('input must hold at least one message.', 'input');
  }
  return messages;
}

function messageOf(item: Json, at: string): Json {
  if (typeof item.role !== 'string' || !MESSAGE_ROLES.has(item.role)) {
    throw ApiError.invalid(`${at}.role must be one of: user, assistant, system, developer.`, `${at}.role`);
  }
  const content = item.content;
  if (typeof content === 'string') {
    return { role: item.role, content };
  }
  if (!Array.isArray(content) || content.length === 0) {
    throw ApiError.invalid(`${at}.content must be a string or a non-empty array of content parts.`, `${at}.content`);
  }
  const parts = content.map((part: unknown, j) => partOf(part, `${at}.content[${j}]`));
  // An assistant turn of text only is sent as a string: what every chat upstream takes.
  if (item.role === 'assistant' && parts.every((part) => part.type === 'text')) {
    return { role: 'assistant', content: parts.map((part) => part.text as string).join('') };
  }
  return { role: item.role, content: parts };
}

function partOf(part: unknown, at: string): Json {
  if (!isObject(part)) {
    throw ApiError.invalid(`${at} must be a content part object.`, at);
  }
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: stringField(part, 'text', at) };
    case 'refusal':
      return { type: 'refusal', refusal: stringField(part, 'refusal', at) };
    case 'input_image':
      return imagePartOf(part, at);
    case 'input_file':
      return filePartOf(part, at);
    default:
      throw ApiError.invalid(
        `${at}.type must be 'input_text', 'input_image', 'input_file', 'output_text' or 'refusal'.`,
        `${at}.type`,
      );
  }
}

function imagePartOf(part: Json, at: string): Json {
  if (typeof part.image_url !== 'string') {
    throw ApiError.invalid(
      `${at}.image_url must be a URL or a data URI (file_id needs stored files, which this gateway does not keep).`,
      `${at}.image_url`,
    );
  }
  const detail = typeof part.detail === 'string' ? { detail: part.detail } : {};
  return { type: 'image_url', image_url: { url: part.image_url, ...detail } };
}

function filePartOf(part: Json, at: string): Json {
  const filename = typeof part.filename === 'string' ? { filename: part.filename } : {};
  if (typeof part.file_data === 'string') {
    return { type: 'file', file: { file_data: part.file_data, ...filename } };
  }
  if (typeof part.file_id === 'string') {
    return { type: 'file', file: { file_id: part.file_id } };
  }
  throw ApiError.invalid(`${at} must carry file_data or file_id (file_url is not supported).`, at);
}

function addToolCall(messages: Json[], item: Json, at: string): void {
  const call = {
    id: stringField(item, 'call_id', at),
    type: 'function',
    function: { name: stringField(item, 'name', at), arguments: stringField(item, 'arguments', at) },
  };
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...((last.tool_calls as Json[] | undefined) ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolResultOf(item: Json, at: string): Json {
  const callId = stringField(item, 'call_id', at);
  const output = item.output;
  if (typeof output === 'string') {
    return { role: 'tool', tool_call_id: callId, content: output };
  }
  if (!Array.isArray(output)) {
    throw ApiError.invalid(`${at}.output must be a string or an array of input_text parts.`, `${at}.output`);
  }
  const text = output.map((part: unknown, j) => {
    if (!isObject(part) || part.type !== 'input_text') {
      throw ApiError.invalid(`${at}.output[${j}] must be an input_text part.`, `${at}.output[${j}]`);
    }
    return stringField(part, 'text', `${at}.output[${j}]`);
  });
  return { role: 'tool', tool_call_id: callId, content: text.join('') };
}

function stringField(object: Json, field: string, at: string): string {
  const value = object[field];
  if (typeof value !== 'string') {
    throw ApiError.invalid(`${at}.${field} must be a string.`, `${at}.${field}`);
  }
  return value;
}
