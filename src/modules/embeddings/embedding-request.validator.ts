import { ApiError } from 'src/common/errors/api-error';
import { HeldTokens } from 'src/modules/billing/metering.types';
import { estimateEmbeddingTokens } from 'src/modules/billing/token-estimator';
import { REQUEST_FIELDS } from 'src/modules/relay/chat-request/chat-request.contract';
import { ValidatedRequest } from 'src/modules/relay/admission/completion-admission.service';
import {
  ENCODING_FORMATS,
  EncodingFormat,
  MAX_DIMENSIONS,
  MAX_EMBEDDING_INPUTS,
  MAX_EMBEDDING_REQUEST_TOKENS,
  MAX_GEMINI_BATCH,
  MAX_TOKEN_ID,
  MAX_TOKENS_PER_INPUT,
} from 'src/modules/embeddings/embedding-request.contract';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';
import { MODEL_KIND_NAMES, MODEL_KIND_ROUTES } from 'src/modules/models/model.entity';

/** One input: text, or token ids. */
export type EmbeddingInput = string | number[];

/** What the relay needs to know of an embeddings request. */
export interface EmbeddingRequest {
  model: CatalogModel;
  /** The model's routes that can serve this request, in the catalog's order. */
  routes: CatalogRoute[];
  inputs: EmbeddingInput[];
  encodingFormat: EncodingFormat;
  dimensions: number | null;
}

/** The embeddings route's view of an admitted request. */
export interface EmbeddingAdmission extends ValidatedRequest {
  embedding: EmbeddingRequest;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isAbsent = (value: unknown) => value === undefined || value === null;
const INPUT_SHAPES =
  'a non-empty string, an array of non-empty strings, an array of token ids, or an array of such arrays';

/**
 * Validates an embeddings body against the catalog. Throws the 400 the client should see, naming the
 * offending parameter; returns the request, and the tokens to hold: its input, at the input price only.
 */
export function validateEmbeddingRequest(
  body: unknown,
  findModel: (id: string) => CatalogModel | undefined,
): EmbeddingAdmission {
  if (!isObject(body)) {
    throw ApiError.invalid('The request body must be a JSON object.');
  }
  if (typeof body.model !== 'string' || body.model === '') {
    throw ApiError.invalid(
      body.model === undefined ? 'Missing required parameter: model.' : 'model must be a string.',
      'model',
    );
  }
  const inputs = inputsOf(body.input);
  const encodingFormat = checkEncodingFormat(body.encoding_format);
  const dimensions = checkDimensions(body.dimensions);
  checkUser(body.user);
  const promptTokens = estimateEmbeddingTokens(inputs);
  if (promptTokens > MAX_EMBEDDING_REQUEST_TOKENS) {
    throw ApiError.invalid(
      `input is too large: about ${promptTokens} tokens; a request may hold at most ${MAX_EMBEDDING_REQUEST_TOKENS}.`,
      'input',
    );
  }
  const model = findModel(body.model);
  if (!model) {
    throw ApiError.invalid(`The model '${body.model}' does not exist or you do not have access to it.`, 'model');
  }
  if (model.kind !== 'embedding') {
    throw ApiError.invalid(
      `The model '${model.id}' is ${MODEL_KIND_NAMES[model.kind]}: use ${MODEL_KIND_ROUTES[model.kind]}, not embeddings.`,
      'model',
    );
  }
  const routes = servingRoutes(model, inputs);
  const held: HeldTokens = { promptTokens, completionTokens: 0 };
  return { model, held, embedding: { model, routes, inputs, encodingFormat, dimensions } };
}

/**
 * Anthropic has no embeddings; Gemini takes text only, and at most MAX_GEMINI_BATCH inputs at once.
 * A model none of whose routes can serve the request is refused here, before anything is held.
 */
function servingRoutes(model: CatalogModel, inputs: EmbeddingInput[]): CatalogRoute[] {
  const embeddingRoutes = model.routes.filter((route) => route.channel.type !== 'anthropic');
  if (embeddingRoutes.length === 0) {
    throw ApiError.invalid(
      `The model '${model.id}' has no upstream that serves embeddings (Anthropic channels have none).`,
      'model',
    );
  }
  const tokenIds = inputs.some((input) => typeof input !== 'string');
  const geminiCannot = tokenIds || inputs.length > MAX_GEMINI_BATCH;
  const routes = embeddingRoutes.filter((route) => route.channel.type !== 'gemini' || !geminiCannot);
  if (routes.length === 0) {
    throw ApiError.invalid(
      tokenIds
        ? `The model '${model.id}' is served by Gemini, which takes text only: send input as strings, not token ids.`
        : `The model '${model.id}' is served by Gemini, which takes at most ${MAX_GEMINI_BATCH} inputs a request.`,
      'input',
    );
  }
  return routes;
}

/** `input` as a list of inputs, whichever of the four shapes it came in. */
function inputsOf(input: unknown): EmbeddingInput[] {
  if (input === undefined) {
    throw ApiError.invalid('Missing required parameter: input.', 'input');
  }
  if (typeof input === 'string') {
    return [checkText(input, 'input')];
  }
  if (!Array.isArray(input) || input.length === 0) {
    throw ApiError.invalid(`input must be ${INPUT_SHAPES}.`, 'input');
  }
  if (input.every((item) => typeof item === 'number')) {
    return [checkTokenIds(input, 'input')];
  }
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw ApiError.invalid(`input may hold at most ${MAX_EMBEDDING_INPUTS} items; got ${input.length}.`, 'input');
  }
  const strings = typeof input[0] === 'string';
  return input.map((item: unknown, i) => {
    const at = `input[${i}]`;
    if (strings && typeof item === 'string') {
      return checkText(item, at);
    }
    if (!strings && Array.isArray(item)) {
      return checkTokenIds(item, at);
    }
    throw ApiError.invalid(`input must be ${INPUT_SHAPES}; ${at} breaks the shape.`, 'input');
  });
}

function checkText(text: string, at: string): string {
  if (text === '') {
    throw ApiError.invalid(`${at} must not be empty.`, 'input');
  }
  return text;
}

function checkTokenIds(ids: unknown[], at: string): number[] {
  if (ids.length === 0 || ids.length > MAX_TOKENS_PER_INPUT) {
    throw ApiError.invalid(`${at} must hold 1 to ${MAX_TOKENS_PER_INPUT} token ids; got ${ids.length}.`, 'input');
  }
  const valid = ids.every((id) => typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= MAX_TOKEN_ID);
  if (!valid) {
    throw ApiError.invalid(`${at} must hold token ids: integers from 0 to ${MAX_TOKEN_ID}.`, 'input');
  }
  return ids as number[];
}

function checkEncodingFormat(format: unknown): EncodingFormat {
  if (isAbsent(format)) {
    return 'float';
  }
  const known = ENCODING_FORMATS.find((name) => name === format);
  if (!known) {
    throw ApiError.invalid(`encoding_format must be one of: ${ENCODING_FORMATS.join(', ')}.`, 'encoding_format');
  }
  return known;
}

function checkDimensions(dimensions: unknown): number | null {
  if (isAbsent(dimensions)) {
    return null;
  }
  const valid = typeof dimensions === 'number' && Number.isInteger(dimensions);
  if (!valid || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
    throw ApiError.invalid(`dimensions must be an integer from 1 to ${MAX_DIMENSIONS}.`, 'dimensions');
  }
  return dimensions;
}

function checkUser(user: unknown): void {
  const { maxLength } = REQUEST_FIELDS.user;
  if (!isAbsent(user) && (typeof user !== 'string' || user.length > maxLength)) {
    throw ApiError.invalid(`user must be a string of at most ${maxLength} characters.`, 'user');
  }
}
