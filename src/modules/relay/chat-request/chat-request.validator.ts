import { ApiError } from 'src/common/errors/api-error';
import { checkStop, checkStreamOptions, isAbsent, isObject, Json } from 'src/modules/relay/chat-request/request-checks';
import { isBase64, isBase64DataUri } from 'src/modules/relay/chat-request/base64-text';
import {
  ACCEPTED_MESSAGE_ROLES,
  CONTENT_PART_TYPES,
  MAX_JSON_VALUES,
  MAX_NESTING_DEPTH,
  MESSAGE_ROLES,
  REQUEST_FIELDS,
  RequestFieldOfType,
  SERVICE_TIERS,
} from 'src/modules/relay/chat-request/chat-request.contract';
import { CatalogModel } from 'src/modules/models/catalog.service';
import { MODEL_KIND_NAMES, MODEL_KIND_ROUTES } from 'src/modules/models/model.entity';

/** What the gateway needs to know of a request; the body itself is relayed as the client sent it. */
export interface ChatRequest {
  model: CatalogModel;
  stream: boolean;
  /** The requested output cap (the larger of `max_tokens` and `max_completion_tokens`), or null for the model's maximum. */
  maxTokens: number | null;
  n: number;
  /** The client asked for the usage chunk at the end of a stream. */
  includeUsage: boolean;
}

const ROLES: ReadonlySet<string> = new Set(ACCEPTED_MESSAGE_ROLES);
const OFFERED_ROLES = MESSAGE_ROLES.join(', ');
const PART_TYPES: ReadonlySet<string> = new Set(CONTENT_PART_TYPES);
const TIERS: ReadonlySet<string> = new Set(SERVICE_TIERS);
const OFFERED_TIERS = SERVICE_TIERS.map((tier) => `'${tier}'`).join(' or ');

/**
 * Validates a chat-completion body against its contract (docs/errors.md, "Limits") and the model
 * catalog. Throws the 400 the client should see, naming the offending parameter; returns what routing
 * and metering need.
 */
export function validateChatRequest(body: unknown, findModel: (id: string) => CatalogModel | undefined): ChatRequest {
  if (!isObject(body)) {
    throw ApiError.invalid('The request body must be a JSON object.');
  }
  checkSize(body);
  if (typeof body.model !== 'string' || body.model === '') {
    throw ApiError.invalid(
      body.model === undefined ? 'Missing required parameter: model.' : 'model must be a string.',
      'model',
    );
  }
  const hasImages = checkMessages(body.messages);
  checkNumber(body, 'temperature');
  checkNumber(body, 'top_p');
  checkNumber(body, 'presence_penalty');
  checkNumber(body, 'frequency_penalty');
  const n = checkInteger(body, 'n') ?? REQUEST_FIELDS.n.default;
  const outputCaps = [checkInteger(body, 'max_tokens'), checkInteger(body, 'max_completion_tokens')];
  const stream = checkBoolean(body, 'stream') ?? REQUEST_FIELDS.stream.default;
  const includeUsage = checkStreamOptions(body, stream);
  checkStop(body.stop, REQUEST_FIELDS.stop.maxItems);
  checkUser(body.user);
  checkServiceTier(body.service_tier);

  const model = findModel(body.model);
  if (!model) {
    throw ApiError.invalid(`The model '${body.model}' does not exist or you do not have access to it.`, 'model');
  }
  if (model.kind !== 'chat') {
    throw ApiError.invalid(
      `The model '${model.id}' is ${MODEL_KIND_NAMES[model.kind]}: use ${MODEL_KIND_ROUTES[model.kind]}, not chat completions.`,
      'model',
    );
  }
  if (hasImages && !model.vision) {
    throw ApiError.invalid(`The model '${model.id}' does not accept image input.`, 'messages');
  }
  ['max_tokens', 'max_completion_tokens'].forEach((param, i) => {
    const cap = outputCaps[i];
    if (cap !== null && cap > model.maxOutputTokens) {
      throw ApiError.invalid(
        `${param} is too large: ${cap}. The model '${model.id}' supports at most ${model.maxOutputTokens} completion tokens.`,
        param,
      );
    }
  });
  // Which one an upstream obeys differs between providers, so the hold covers the larger.
  const requested = outputCaps.filter((cap): cap is number => cap !== null);
  const maxTokens = requested.length > 0 ? Math.max(...requested) : null;
  return { model, stream, maxTokens, n, includeUsage };
}

/** The most completion tokens a request may generate, over all its `n` choices: what its hold covers. */
export function outputTokenCap(chat: ChatRequest): number {
  return (chat.maxTokens ?? chat.model.maxOutputTokens) * chat.n;
}

/** Returns whether any message carries an image part. */
function checkMessages(messages: unknown): boolean {
  if (messages === undefined) {
    throw ApiError.invalid('Missing required parameter: messages.', 'messages');
  }
  if (!Array.isArray(messages)) {
    throw ApiError.invalid('messages must be an array of message objects.', 'messages');
  }
  if (messages.length === 0) {
    throw ApiError.invalid('messages must contain at least one message.', 'messages');
  }
  let hasImages = false;
  messages.forEach((message: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) {
      throw ApiError.invalid(`${at} must be an object.`, at);
    }
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw ApiError.invalid(`${at}.role must be one of: ${OFFERED_ROLES}.`, `${at}.role`);
    }
    const mayOmitContent = message.role === 'assistant' && (message.tool_calls || message.function_call);
    if (isAbsent(message.content) && mayOmitContent) {
      return;
    }
    if (message.role === 'tool' && typeof message.tool_call_id !== 'string') {
      throw ApiError.invalid(`${at}.tool_call_id is required for tool messages.`, `${at}.tool_call_id`);
    }
    hasImages = checkContent(message.content, `${at}.content`) || hasImages;
  });
  return hasImages;
}

function checkContent(content: unknown, at: string): boolean {
  if (typeof content === 'string') {
    return false;
  }
  if (content === undefined) {
    throw ApiError.invalid(`Missing required parameter: ${at}.`, at);
  }
  if (!Array.isArray(content) || content.length === 0) {
    throw ApiError.invalid(`${at} must be a string or a non-empty array of content parts.`, at);
  }
  let hasImages = false;
  content.forEach((part: unknown, j) => {
    const partAt = `${at}[${j}]`;
    if (!isObject(part) || typeof part.type !== 'string' || !PART_TYPES.has(part.type)) {
      throw ApiError.invalid(`${partAt} must be a content part with type 'text' or 'image_url'.`, `${partAt}.type`);
    }
    if (part.type === 'text' && typeof part.text !== 'string') {
      throw ApiError.invalid(`${partAt}.text must be a string.`, `${partAt}.text`);
    }
    if (part.type === 'image_url') {
      checkImageUrl(part.image_url, `${partAt}.image_url`);
      hasImages = true;
    }
    if (part.type === 'input_audio') {
      checkInputAudio(part.input_audio, `${partAt}.input_audio`);
    }
    if (part.type === 'file') {
      checkFile(part.file, `${partAt}.file`);
    }
  });
  return hasImages;
}

function checkInputAudio(audio: unknown, at: string): void {
  if (!isObject(audio) || typeof audio.data !== 'string' || !isBase64(audio.data)) {
    throw ApiError.invalid(`${at}.data must be base64-encoded audio.`, `${at}.data`);
  }
  if (typeof audio.format !== 'string') {
    throw ApiError.invalid(`${at}.format must be a string.`, `${at}.format`);
  }
}

function checkFile(file: unknown, at: string): void {
  const data = isObject(file) ? file.file_data : undefined;
  const id = isObject(file) ? file.file_id : undefined;
  const valid = typeof data === 'string' ? isAbsent(id) : typeof id === 'string' && isAbsent(data);
  if (!valid) {
    throw ApiError.invalid(`${at} must carry either file_data (a string) or file_id (a string).`, at);
  }
}

function checkServiceTier(tier: unknown): void {
  if (!isAbsent(tier) && !(typeof tier === 'string' && TIERS.has(tier))) {
    throw ApiError.invalid(
      `service_tier must be ${OFFERED_TIERS}: other tiers are priced differently and are not offered.`,
      'service_tier',
    );
  }
}

function checkUser(user: unknown): void {
  const { maxLength } = REQUEST_FIELDS.user;
  if (!isAbsent(user) && (typeof user !== 'string' || user.length > maxLength)) {
    throw ApiError.invalid(`user must be a string of at most ${maxLength} characters.`, 'user');
  }
}

/** Nesting and the number of JSON values, for each top-level field; walked without recursion. */
function checkSize(body: Json): void {
  let values = 0;
  for (const [field, root] of Object.entries(body)) {
    // Values still to visit and their depths, side by side: no allocation per value.
    const pending: unknown[] = [root];
    const depths: number[] = [1];
    values++;
    while (pending.length > 0) {
      const value = pending.pop();
      const depth = depths.pop()!;
      if (typeof value !== 'object' || value === null) {
        continue;
      }
      if (depth > MAX_NESTING_DEPTH) {
        throw ApiError.invalid(`${field} is nested deeper than ${MAX_NESTING_DEPTH} levels.`, field);
      }
      const children = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
      values += children.length;
      if (values > MAX_JSON_VALUES) {
        throw ApiError.invalid(`The request has more than ${MAX_JSON_VALUES} JSON values.`, field);
      }
      for (const child of children) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
}

function checkImageUrl(imageUrl: unknown, at: string): void {
  const url = isObject(imageUrl) ? imageUrl.url : undefined;
  if (typeof url !== 'string') {
    throw ApiError.invalid(`${at}.url must be a string.`, `${at}.url`);
  }
  if (url.startsWith('data:') ? isBase64DataUri(url) : isHttpUrl(url)) {
    return;
  }
  throw ApiError.invalid(
    `${at}.url must be an absolute http(s) URL or a data URI of the form data:<media_type>;base64,<data>.`,
    `${at}.url`,
  );
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function checkNumber(body: Json, param: RequestFieldOfType<'number'>): void {
  const { minimum: min, maximum: max } = REQUEST_FIELDS[param];
  const value = body[param];
  if (isAbsent(value)) {
    return;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw ApiError.invalid(`${param} must be a number.`, param);
  }
  if (value < min || value > max) {
    throw ApiError.invalid(`${param} must be between ${min} and ${max}; got ${value}.`, param);
  }
}

function checkInteger(body: Json, param: RequestFieldOfType<'integer'>): number | null {
  const field = REQUEST_FIELDS[param];
  const min = field.minimum;
  const max = 'maximum' in field ? field.maximum : undefined;
  const value = body[param];
  if (isAbsent(value)) {
    return null;
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw ApiError.invalid(`${param} must be an integer.`, param);
  }
  if (value < min) {
    throw ApiError.invalid(`${param} must be at least ${min}; got ${value}.`, param);
  }
  if (max !== undefined && value > max) {
    throw ApiError.invalid(`${param} must be at most ${max}; got ${value}.`, param);
  }
  return value;
}

function checkBoolean(body: Json, param: RequestFieldOfType<'boolean'>): boolean | null {
  const value = body[param];
  if (isAbsent(value)) {
    return null;
  }
  if (typeof value !== 'boolean') {
    throw ApiError.invalid(`${param} must be a boolean.`, param);
  }
  return value;
}
