import { ApiError } from 'src/common/errors/api-error';
import { parseUsd } from 'src/common/money/money';
import { JsonNumber, LosslessJson } from 'src/modules/models/price-book/lossless-json';

/** A model's four prices, nano-dollars per one million tokens; null: those tokens cost the input price. */
export interface ModelPrices {
  inputPrice: bigint;
  outputPrice: bigint;
  cachedInputPrice: bigint | null;
  cacheWriteInputPrice: bigint | null;
}
export interface PricedModel extends ModelPrices {
  id: string;
}

export interface PriceChange {
  id: string;
  before: ModelPrices;
  after: ModelPrices;
}
export interface PriceBookDiff {
  changed: PriceChange[];
  unchanged: number;
  /** Ids in the book the catalog does not have: a price book prices models, it never creates them. */
  unknown: string[];
}

export const PRICE_BOOK_FORMATS = ['gateway', 'litellm'] as const;
export type PriceBookFormat = (typeof PRICE_BOOK_FORMATS)[number];

/** The same bounds as a single model's PUT (ModelUpsertDto): up to $9,999,999.999999999 per million, 9 decimals. */
const PRICE = /^\d{1,7}(\.\d{1,9})?$/;
const MAX_PRICE_NANOS = 9_999_999_999_999_999n;
const MAX_MODELS = 10_000;
const PRICE_FIELDS = ['inputPrice', 'outputPrice', 'cachedInputPrice', 'cacheWriteInputPrice'] as const;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The gateway's own price book, as `GET /admin/price-books` exports it:
 * `{ "models": [{ "id", "inputPrice", "outputPrice", "cachedInputPrice"?, "cacheWriteInputPrice"? }] }`,
 * decimal strings of USD per one million tokens. An optional price left out or null is null.
 */
export function readGatewayPriceBook(body: unknown): PricedModel[] {
  const models = isRecord(body) ? body.models : undefined;
  if (!Array.isArray(models)) {
    throw ApiError.invalid('A price book is { "models": [ { "id", "inputPrice", "outputPrice", … } ] }.', 'models');
  }
  if (models.length > MAX_MODELS) {
    throw ApiError.invalid(`A price book holds at most ${MAX_MODELS} models.`, 'models');
  }
  const seen = new Set<string>();
  return models.map((entry: unknown, index) => {
    const at = `models[${index}]`;
    if (!isRecord(entry) || typeof entry.id !== 'string' || entry.id.length < 1 || entry.id.length > 256) {
      throw ApiError.invalid(`${at} needs an id: a string of 1 to 256 characters.`, `${at}.id`);
    }
    if (seen.has(entry.id)) {
      throw ApiError.invalid(`Model '${entry.id}' appears twice.`, `${at}.id`);
    }
    const id = entry.id;
    seen.add(id);
    const price = (field: (typeof PRICE_FIELDS)[number], optional: boolean): bigint | null => {
      const value = entry[field];
      if (optional && (value === undefined || value === null)) {
        return null;
      }
      if (typeof value !== 'string' || !PRICE.test(value)) {
        throw ApiError.invalid(
          `Model '${id}': ${field} must be a decimal string in USD per million tokens, at most 9 decimals.`,
          `${at}.${field}`,
        );
      }
      return parseUsd(value)!;
    };
    return {
      id,
      inputPrice: price('inputPrice', false)!,
      outputPrice: price('outputPrice', false)!,
      cachedInputPrice: price('cachedInputPrice', true),
      cacheWriteInputPrice: price('cacheWriteInputPrice', true),
    };
  });
}

/** LiteLLM's per-token fields, and the price each one sets. */
const LITELLM_FIELDS = [
  ['input_cost_per_token', 'inputPrice'],
  ['output_cost_per_token', 'outputPrice'],
  ['cache_read_input_token_cost', 'cachedInputPrice'],
  ['cache_creation_input_token_cost', 'cacheWriteInputPrice'],
] as const;
/** The file's own documentation entry, not a model. */
const LITELLM_SAMPLE_KEY = 'sample_spec';

/**
 * LiteLLM's `model_prices_and_context_window.json`: model name → { input_cost_per_token, … } in USD
 * per token. Only entries whose name is in `known` are read (the rest are the diff's `unknown`);
 * each of their costs is converted from the number's literal (never a float) to nano-dollars per
 * million tokens, and one that is not a whole number of those is refused, naming model and field.
 */
export function readLiteLlmPriceBook(
  document: LosslessJson,
  known: ReadonlySet<string>,
): {
  models: PricedModel[];
  unknown: string[];
} {
  if (!(document instanceof Map)) {
    throw ApiError.invalid(
      'LiteLLM\'s price file is an object of models: { "gpt-4o": { "input_cost_per_token": … } }.',
    );
  }
  const models: PricedModel[] = [];
  const unknown: string[] = [];
  for (const [id, entry] of document) {
    if (id === LITELLM_SAMPLE_KEY) {
      continue;
    }
    if (!known.has(id)) {
      unknown.push(id);
      continue;
    }
    if (!(entry instanceof Map)) {
      throw ApiError.invalid(`Model '${id}' must be an object of costs.`, id);
    }
    const prices: Partial<Record<(typeof PRICE_FIELDS)[number], bigint | null>> = {};
    for (const [field, price] of LITELLM_FIELDS) {
      const value = entry.get(field);
      const required = price === 'inputPrice' || price === 'outputPrice';
      if (value === undefined || (value === null && !required)) {
        if (required) {
          throw ApiError.invalid(
            `Model '${id}' has no ${field}: the gateway prices every model by tokens.`,
            `${id}.${field}`,
          );
        }
        prices[price] = null;
        continue;
      }
      if (!(value instanceof JsonNumber)) {
        throw ApiError.invalid(`Model '${id}': ${field} must be a number (USD per token).`, `${id}.${field}`);
      }
      const converted = perTokenToNanosPerMillion(value.literal);
      if (typeof converted === 'string') {
        throw ApiError.invalid(`Model '${id}': ${field} ${value.literal} ${converted}.`, `${id}.${field}`);
      }
      prices[price] = converted;
    }
    models.push({
      id,
      inputPrice: prices.inputPrice!,
      outputPrice: prices.outputPrice!,
      cachedInputPrice: prices.cachedInputPrice ?? null,
      cacheWriteInputPrice: prices.cacheWriteInputPrice ?? null,
    });
  }
  return { models, unknown };
}

const NUMBER_LITERAL = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A JSON number literal of USD per token as nano-dollars per one million tokens, exactly: the
 * literal's digits shifted by its exponent, 6 places for the million and 9 for nanos, in integers.
 * Returns why it cannot be when it cannot (a reason to put in a 400).
 */
export function perTokenToNanosPerMillion(literal: string): bigint | string {
  const match = NUMBER_LITERAL.exec(literal);
  if (!match) {
    return 'is not a number';
  }
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') {
    return 0n;
  }
  if (sign) {
    return 'is negative';
  }
  // Beyond this the value is far outside a price either way; it also bounds the integers below.
  if (Math.abs(Number(exponent)) > 400) {
    return 'is out of range';
  }
  let scale = Number(exponent) - fraction.length + 15;
  while (scale < 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale++;
  }
  if (scale < 0) {
    return 'is not a whole number of nano-dollars per million tokens (at most 9 decimals per million)';
  }
  if (digits.length + scale > 17 || BigInt(digits) * 10n ** BigInt(scale) > MAX_PRICE_NANOS) {
    return 'is more than the largest price, $9999999.999999999 per million tokens';
  }
  return BigInt(digits) * 10n ** BigInt(scale);
}

const samePrices = (a: ModelPrices, b: ModelPrices) => PRICE_FIELDS.every((field) => a[field] === b[field]);
const pricesOf = ({ inputPrice, outputPrice, cachedInputPrice, cacheWriteInputPrice }: ModelPrices): ModelPrices => ({
  inputPrice,
  outputPrice,
  cachedInputPrice,
  cacheWriteInputPrice,
});

/** What applying `book` to `current` changes, model by model; ids the catalog lacks are `unknown`. */
export function diffPriceBook(current: PricedModel[], book: PricedModel[]): PriceBookDiff {
  const byId = new Map(current.map((model) => [model.id, model]));
  const diff: PriceBookDiff = { changed: [], unchanged: 0, unknown: [] };
  for (const entry of book) {
    const before = byId.get(entry.id);
    if (!before) {
      diff.unknown.push(entry.id);
    } else if (samePrices(before, entry)) {
      diff.unchanged++;
    } else {
      diff.changed.push({ id: entry.id, before: pricesOf(before), after: pricesOf(entry) });
    }
  }
  return diff;
}
