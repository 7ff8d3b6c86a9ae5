const TOKENS_PER_PRICE_UNIT = 1_000_000n;

/** Nano-dollars per one million tokens. */
export interface Prices {
  inputPrice: bigint;
  outputPrice: bigint;
}

/** CONTRACT: prompt × input price / 1e6 + completion × output price / 1e6, rounded up once to a whole nano-dollar. */
export function usageCost(prices: Prices, promptTokens: number, completionTokens: number): bigint {
  const scaled = BigInt(promptTokens) * prices.inputPrice + BigInt(completionTokens) * prices.outputPrice;
  return (scaled + TOKENS_PER_PRICE_UNIT - 1n) / TOKENS_PER_PRICE_UNIT;
}

/** CONTRACT: the referrer's credit is the invitee's cost × share / 100, rounded down to a whole nano-dollar. */
export function referralCredit(charged: bigint, sharePercent: number): bigint {
  return (charged * BigInt(sharePercent)) / 100n;
}
