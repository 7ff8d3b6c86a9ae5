/** WeChat Pay writes amounts in fen (integers) and times in Beijing time; we keep CNY with two decimals. */

const AMOUNT_PATTERN = /^(\d+)\.(\d{2})$/;
const BEIJING_OFFSET_MS = 8 * 60 * 60 * 1000;

/** 1230 fen → '12.30'. Throws on anything but a non-negative whole number of fen. */
export function fenToAmount(fen: number | bigint): string {
  if (typeof fen === 'number' && !Number.isSafeInteger(fen)) {
    throw new RangeError('an amount in fen must be a whole number');
  }
  const whole = BigInt(fen);
  if (whole < 0n) {
    throw new RangeError('an amount in fen cannot be negative');
  }
  return `${whole / 100n}.${(whole % 100n).toString().padStart(2, '0')}`;
}

/**
 * Fen as `amount.total` is written: a JSON integer. An integer count of fen is exact as a number up to
 * 2^53; past that (never a real order) it throws instead of rounding.
 */
export function fenForWire(fen: bigint): number {
  if (fen < 0n || fen > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError('an amount in fen must be a whole number from 0 to 2^53 - 1');
  }
  return Number(fen);
}

/** '12.30' → 1230n. Throws unless the amount has exactly two decimals, as both wallets write it. */
export function amountToFen(amount: string): bigint {
  const match = AMOUNT_PATTERN.exec(amount);
  if (!match) {
    throw new RangeError('an amount must have exactly two decimals');
  }
  return BigInt(match[1]) * 100n + BigInt(match[2]);
}

/** RFC 3339 in Beijing time, to the second, as `time_expire` is written: 2024-01-02T03:04:05+08:00. */
export function toBeijingTime(date: Date): string {
  const shifted = new Date(date.getTime() + BEIJING_OFFSET_MS);
  return `${shifted.toISOString().slice(0, 19)}+08:00`;
}
