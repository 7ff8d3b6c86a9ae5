import { ONE_MULTIPLIER_PPM } from 'src/common/money/price-multiplier';

const TOKENS_PER_PRICE_UNIT = 1_000_000n;

/** Nano-dollars per one million tokens. */
export interface Prices {
  inputPrice: bigint;
  outputPrice: bigint;
  /** Prompt tokens the upstream read from its cache; absent (or null): the input price. */
  cachedInputPrice?: bigint | null;
  /** Prompt tokens the upstream wrote to its cache (Anthropic); absent (or null): the input price. */
  cacheWriteInputPrice?: bigint | null;
}

/** A request's tokens as billed: the cached and cache-write tokens are parts of the prompt tokens. */
export interface BilledTokens {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

/**
 * CONTRACT: prompt × input price / 1e6 + completion × output price / 1e6, rounded up once to a whole
 * nano-dollar. `multiplierPpm` is the account group's price multiplier in millionths (1× by default),
 * applied inside that one rounding.
 */
export function usageCost(
  prices: Prices,
  promptTokens: number,
  completionTokens: number,
  multiplierPpm = ONE_MULTIPLIER_PPM,
): bigint {
  return roundUp(
    BigInt(promptTokens) * prices.inputPrice + BigInt(completionTokens) * prices.outputPrice,
    multiplierPpm,
  );
}

/**
 * The cost of a request whose prompt was partly read from or written to the upstream's cache:
 * uncached × input + cached × cached price + cache writes × write price + completion × output,
 * the sum divided by 1e6 and rounded up once. Without the split (or the prices) it is `usageCost`.
 */
export function splitUsageCost(prices: Prices, tokens: BilledTokens, multiplierPpm = ONE_MULTIPLIER_PPM): bigint {
  const { cached, written, uncached } = promptSplit(tokens);
  const scaled =
    uncached * prices.inputPrice +
    cached * (prices.cachedInputPrice ?? prices.inputPrice) +
    written * (prices.cacheWriteInputPrice ?? prices.inputPrice) +
    BigInt(tokens.completionTokens) * prices.outputPrice;
  return roundUp(scaled, multiplierPpm);
}

/**
 * The most a request can cost before anyone knows how much of its prompt the cache serves: every
 * prompt token at the dearest prompt price (a cache write is dearer than the input price at Anthropic).
 */
export function worstCaseCost(
  prices: Prices,
  promptTokens: number,
  completionTokens: number,
  multiplierPpm = ONE_MULTIPLIER_PPM,
): bigint {
  const promptPrice = [prices.cachedInputPrice, prices.cacheWriteInputPrice].reduce<bigint>(
    (max, price) => (price !== null && price !== undefined && price > max ? price : max),
    prices.inputPrice,
  );
  return usageCost(
    { inputPrice: promptPrice, outputPrice: prices.outputPrice },
    promptTokens,
    completionTokens,
    multiplierPpm,
  );
}

/** The prompt's parts; counts an upstream reported beyond the prompt are capped, so no token is billed twice. */
function promptSplit(tokens: BilledTokens): { cached: bigint; written: bigint; uncached: bigint } {
  const prompt = Math.max(0, tokens.promptTokens);
  const cached = Math.min(prompt, Math.max(0, tokens.cachedTokens ?? 0));
  const written = Math.min(prompt - cached, Math.max(0, tokens.cacheWriteTokens ?? 0));
  return { cached: BigInt(cached), written: BigInt(written), uncached: BigInt(prompt - cached - written) };
}

/** Σ tokens × price, times the multiplier, over 1e6 tokens and 1e6 millionths: rounded up once. */
function roundUp(scaled: bigint, multiplierPpm: bigint): bigint {
  if (multiplierPpm === ONE_MULTIPLIER_PPM) {
    return (scaled + TOKENS_PER_PRICE_UNIT - 1n) / TOKENS_PER_PRICE_UNIT;
  }
  const divisor = TOKENS_PER_PRICE_UNIT * ONE_MULTIPLIER_PPM;
  return (scaled * multiplierPpm + divisor - 1n) / divisor;
}

/** CONTRACT: the referrer's credit is the invitee's cost × share / 100, rounded down to a whole nano-dollar. */
export function referralCredit(charged: bigint, sharePercent: number): bigint {
  return (charged * BigInt(sharePercent)) / 100n;
}
