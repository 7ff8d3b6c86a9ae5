/** The currencies of an order: what a customer pays in (CNY, USDT), and USD for a redemption code. */
export const TOPUP_CURRENCIES = ['CNY', 'USDT', 'USD'] as const;
export type TopupCurrency = (typeof TOPUP_CURRENCIES)[number];

/** Decimal places of each currency's amount: CNY in fen, USDT in its 6-decimal units, USD in nano-dollars. */
export const CURRENCY_DECIMALS: Record<TopupCurrency, number> = { CNY: 2, USDT: 6, USD: 9 };

// At most 12 whole digits: far beyond any order's maximum, and far inside a bigint column.
const DECIMAL = /^(\d{1,12})(?:\.(\d+))?$/;

/**
 * An amount as the customer writes it ("100", "99.9", "12.30"), in the currency's smallest unit; null
 * when it is not a plain positive decimal with at most the currency's places (no sign, no exponent).
 */
export function parseAmount(text: string, currency: TopupCurrency): bigint | null {
  const match = DECIMAL.exec(text);
  const decimals = CURRENCY_DECIMALS[currency];
  if (!match || (match[2] ?? '').length > decimals) {
    return null;
  }
  const minor = BigInt(match[1]) * 10n ** BigInt(decimals) + BigInt((match[2] ?? '').padEnd(decimals, '0'));
  return minor > 0n ? minor : null;
}

/** An amount with exactly the currency's places ("12.30" CNY, "5.000000" USDT); USD is written shortest. */
export function formatAmount(minor: bigint, currency: TopupCurrency): string {
  const decimals = CURRENCY_DECIMALS[currency];
  const scale = 10n ** BigInt(decimals);
  const fraction = (minor % scale).toString().padStart(decimals, '0');
  const text = `${minor / scale}.${fraction}`;
  return currency === 'USD' ? text.replace(/\.?0+$/, '') : text;
}
