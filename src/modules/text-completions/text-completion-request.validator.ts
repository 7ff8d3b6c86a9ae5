import { ApiError } from 'src/common/errors/api-error';
import { checkStop, checkStreamOptions, isAbsent, isObject, Json } from 'src/modules/relay/chat-request/request-checks';
import { estimateEmbeddingTokens } from 'src/modules/billing/token-estimator';
import { ValidatedRequest } from 'src/modules/relay/admission/completion-admission.service';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';
import { MODEL_KIND_NAMES, MODEL_KIND_ROUTES } from 'src/modules/models/model.entity';
import {
  MAX_PROMPTS,
  MAX_TOKEN_ID,
  TEXT_COMPLETION_FIELDS as FIELDS,
} from 'src/modules/text-completions/text-completion-request.contract';

/** One prompt: text, or token ids. */
export type Prompt = string | number[];

/** What the relay needs to know of a legacy completions request; the body itself is relayed as sent. */
export interface TextCompletionRequest {
  model: CatalogModel;
  /** The model's OpenAI-type routes, in the catalog's order: no other upstream has this API. */
  routes: CatalogRoute[];
  stream: boolean;
  /** The client asked for the usage chunk at the end of a stream. */
  includeUsage: boolean;
  /** `max_tokens`, or OpenAI's default of 16, sent explicitly so that no upstream default exceeds the hold. */
  maxTokens: number;
}

/** The legacy completions route's view of an admitted request. */
export interface TextCompletionAdmission extends ValidatedRequest {
  completion: TextCompletionRequest;
}

type NumberField = 'temperature' | 'top_p' | 'presence_penalty' | 'frequency_penalty';
type IntegerField = 'max_tokens' | 'n' | 'best_of' | 'logprobs' | 'seed';

const PROMPT_SHAPES = 'a string, an array of strings, an array of token ids, or an array of such arrays';

/**
 * Validates a legacy completions body against the catalog. Throws the 400 the client should see,
 * naming the offending parameter; returns the request and the tokens to hold: the prompts (and
 * `suffix`), and `max_tokens` for every candidate the upstream may generate (prompts × n × best_of).
 */
export function validateTextCompletionRequest(
  body: unknown,
  findModel: (id: string) => CatalogModel | undefined,
): TextCompletionAdmission {
  if (!isObject(body)) {
    throw ApiError.invalid('The request body must be a JSON object.');
  }
  if (typeof body.model !== 'string' || body.model === '') {
    throw ApiError.invalid(
      body.model === undefined ? 'Missing required parameter: model.' : 'model must be a string.',
      'model',
    );
  }
  const prompts = promptsOf(body.prompt);
  const suffix = checkSuffix(body.suffix);
  (['temperature', 'top_p', 'presence_penalty', 'frequency_penalty'] as const).forEach((f) => checkNumber(body, f));
  const maxTokens = checkInteger(body, 'max_tokens') ?? FIELDS.max_tokens.default;
  const n = checkInteger(body, 'n') ?? FIELDS.n.default;
  const bestOf = checkInteger(body, 'best_of');
  checkInteger(body, 'logprobs');
  checkInteger(body, 'seed');
  const stream = checkBoolean(body, 'stream');
  checkBoolean(body, 'echo');
  const includeUsage = checkStreamOptions(body, stream);
  if (bestOf !== null) {
    checkBestOf(bestOf, n, stream);
  }
  checkStop(body.stop, FIELDS.stop.maxItems);
  checkLogitBias(body.logit_bias);
  checkUser(body.user);

  const model = completionModel(body.model, findModel);
  if (maxTokens > model.maxOutputTokens) {
    throw ApiError.invalid(
      `max_tokens is too large: ${maxTokens}. The model '${model.id}' supports at most ${model.maxOutputTokens} completion tokens.`,
      'max_tokens',
    );
  }
  const routes = model.routes.filter((route) => route.channel.type === 'openai');
  if (routes.length === 0) {
    throw ApiError.invalid(
      `The model '${model.id}' has no upstream that serves legacy completions (only OpenAI-compatible channels do).`,
      'model',
    );
  }
  const held = {
    promptTokens: estimateEmbeddingTokens(suffix === null ? prompts : [...prompts, suffix]),
    completionTokens: maxTokens * prompts.length * n * (bestOf ?? FIELDS.best_of.default),
  };
  return { model, held, completion: { model, routes, stream, includeUsage, maxTokens } };
}

function completionModel(id: string, findModel: (id: string) => CatalogModel | undefined): CatalogModel {
  const model = findModel(id);
  if (!model) {
    throw ApiError.invalid(`The model '${id}' does not exist or you do not have access to it.`, 'model');
  }
  if (model.kind !== 'completion') {
    throw ApiError.invalid(
      `The model '${model.id}' is ${MODEL_KIND_NAMES[model.kind]}: use ${MODEL_KIND_ROUTES[model.kind]}, not legacy completions.`,
      'model',
    );
  }
  return model;
}

/** `prompt` as a list of prompts, whichever of the four shapes it came in. */
function promptsOf(prompt: unknown): Prompt[] {
  if (prompt === undefined) {
    throw ApiError.invalid('Missing required parameter: prompt.', 'prompt');
  }
  if (typeof prompt === 'string') {
    return [prompt];
  }
  if (!Array.isArray(prompt) || prompt.length === 0) {
    throw ApiError.invalid(`prompt must be ${PROMPT_SHAPES}.`, 'prompt');
  }
  if (prompt.every((item) => typeof item === 'number')) {
    return [checkTokenIds(prompt, 'prompt')];
  }
  if (prompt.length > MAX_PROMPTS) {
    throw ApiError.invalid(`prompt may hold at most ${MAX_PROMPTS} prompts; got ${prompt.length}.`, 'prompt');
  }
  const strings = typeof prompt[0] === 'string';
  return prompt.map((item: unknown, i) => {
    if (strings && typeof item === 'string') {
      return item;
    }
    if (!strings && Array.isArray(item)) {
      return checkTokenIds(item, `prompt[${i}]`);
    }
    throw ApiError.invalid(`prompt must be ${PROMPT_SHAPES}; prompt[${i}] breaks the shape.`, 'prompt');
  });
}

function checkTokenIds(ids: unknown[], at: string): number[] {
  if (ids.length === 0) {
    throw ApiError.invalid(`${at} must hold at least one token id.`, 'prompt');
  }
  const valid = ids.every((id) => typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= MAX_TOKEN_ID);
  if (!valid) {
    throw ApiError.invalid(`${at} must hold token ids: integers from 0 to ${MAX_TOKEN_ID}.`, 'prompt');
  }
  return ids as number[];
}

function checkSuffix(suffix: unknown): string | null {
  if (isAbsent(suffix)) {
    return null;
  }
  if (typeof suffix !== 'string') {
    throw ApiError.invalid('suffix must be a string.', 'suffix');
  }
  return suffix;
}

function checkNumber(body: Json, param: NumberField): void {
  const { minimum: min, maximum: max } = FIELDS[param];
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

function checkInteger(body: Json, param: IntegerField): number | null {
  const field = FIELDS[param];
  const max = 'maximum' in field ? field.maximum : undefined;
  const value = body[param];
  if (isAbsent(value)) {
    return null;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw ApiError.invalid(`${param} must be an integer.`, param);
  }
  if (value < field.minimum || (max !== undefined && value > max)) {
    const range = max === undefined ? `at least ${field.minimum}` : `between ${field.minimum} and ${max}`;
    throw ApiError.invalid(`${param} must be ${range}; got ${value}.`, param);
  }
  return value;
}

function checkBoolean(body: Json, param: 'stream' | 'echo'): boolean {
  const value = body[param];
  if (isAbsent(value)) {
    return false;
  }
  if (typeof value !== 'boolean') {
    throw ApiError.invalid(`${param} must be a boolean.`, param);
  }
  return value;
}

/** OpenAI generates best_of candidates and returns the n best: fewer than n cannot be, and none can be streamed. */
function checkBestOf(bestOf: number, n: number, stream: boolean): void {
  if (bestOf < n) {
    throw ApiError.invalid(`best_of must be at least n (${n}); got ${bestOf}.`, 'best_of');
  }
  if (stream && bestOf > n) {
    throw ApiError.invalid(
      'best_of above n cannot be streamed: its candidates are ranked once all are done.',
      'best_of',
    );
  }
}

/** Token ids (as JSON keys) to a bias from -100 to 100. */
function checkLogitBias(bias: unknown): void {
  const { minimum, maximum, maxProperties } = FIELDS.logit_bias;
  if (isAbsent(bias)) {
    return;
  }
  const entries = isObject(bias) ? Object.entries(bias) : null;
  const valid =
    entries !== null &&
    entries.length <= maxProperties &&
    entries.every(
      ([id, value]) =>
        /^\d{1,10}$/.test(id) &&
        Number(id) <= MAX_TOKEN_ID &&
        typeof value === 'number' &&
        value >= minimum &&
        value <= maximum,
    );
  if (!valid) {
    throw ApiError.invalid(
      `logit_bias must map at most ${maxProperties} token ids to numbers from ${minimum} to ${maximum}.`,
      'logit_bias',
    );
  }
}

function checkUser(user: unknown): void {
  const { maxLength } = FIELDS.user;
  if (!isAbsent(user) && (typeof user !== 'string' || user.length > maxLength)) {
    throw ApiError.invalid(`user must be a string of at most ${maxLength} characters.`, 'user');
  }
}
