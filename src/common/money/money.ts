/**
 * Money inside the service is an integer count of nano-dollars (1e-9 USD) held in a bigint.
 * On the wire it is an exact decimal string in USD. Nothing here ever touches a float.
 */
export const NANOS_PER_USD = 1_000_000_000n;
const TOKENS_PER_PRICE_UNIT = 1_000_000n;
// At most 9 whole digits: the largest amount, in nano-dollars, stays far inside a signed 64-bit column.
const DECIMAL_USD = /^(-)?(\d{1,9})(?:\.(\d{1,9}))?$/;

/** Parses an exact decimal USD string ("12.5", "-0.000000001") into nano-dollars; null when malformed. */
export function parseUsd(text: string): bigint | null {
  const match = DECIMAL_USD.exec(text);
  if (!match) {
    return null;
  }
  const [, sign, whole, fraction = ''] = match;
  const nanos = BigInt(whole) * NANOS_PER_USD + BigInt(fraction.padEnd(9, '0'));
  return sign ? -nanos : nanos;
}

/** Formats nano-dollars as the shortest exact decimal USD string ("12.5", "0.000001875", "0"). */
export function formatUsd(nanos: bigint): string {
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  const whole = abs / NANOS_PER_USD;
  const fraction = (abs % NANOS_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Cost of `tokens` at `pricePerMillion` (nano-dollars per one million tokens), rounded up to a whole nano. */
export function tokenCost(tokens: number, pricePerMillion: bigint): bigint {
  const product = BigInt(tokens) * pricePerMillion;
  return (product + TOKENS_PER_PRICE_UNIT - 1n) / TOKENS_PER_PRICE_UNIT;
}
