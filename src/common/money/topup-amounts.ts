import { NANOS_PER_USD } from 'src/common/money/money';

/** An exchange rate: CNY per USD, positive, at most 6 decimals ("7.2", "7.123456"). */
const RATE = /^(\d{1,6})(?:\.(\d{1,6}))?$/;
const RATE_SCALE = 1_000_000n;

/** The rate in millionths; null when malformed or zero. */
export function parseRate(text: string): bigint | null {
  const match = RATE.exec(text);
  if (!match) {
    return null;
  }
  const micros = BigInt(match[1]) * RATE_SCALE + BigInt((match[2] ?? '').padEnd(6, '0'));
  return micros > 0n ? micros : null;
}

/** The rate as the shortest decimal ("7.2"). */
export function formatRate(micros: bigint): string {
  const fraction = (micros % RATE_SCALE).toString().padStart(6, '0').replace(/0+$/, '');
  return `${micros / RATE_SCALE}${fraction ? `.${fraction}` : ''}`;
}

/** USD, in nano-dollars, that an amount in fen buys at `rateMicros` CNY per USD: rounded down (CONTRACT, "Money"). */
export function creditForCny(amountFen: bigint, rateMicros: bigint): bigint {
  // fen / 100 CNY ÷ (rate / 1e6 CNY per USD) × 1e9 nanos per USD
  return (amountFen * RATE_SCALE * NANOS_PER_USD) / (100n * rateMicros);
}

/**
 * The CNY amounts, in fen, whose credit at `rateMicros` lies within [minNanos, maxNanos]: what a customer
 * who types CNY is told when an amount is out of bounds. The credit rounds down, so the least amount is
 * the first whose credit reaches the minimum, and the most is the last whose credit stays at the maximum.
 */
export function cnyRangeFor(minNanos: bigint, maxNanos: bigint, rateMicros: bigint): { min: bigint; max: bigint } {
  // creditForCny(fen) = floor(fen × 1e13 / rate): it is ≥ m exactly when fen ≥ m × rate / 1e13,
  // and ≤ m exactly when fen < (m + 1) × rate / 1e13.
  const scale = (RATE_SCALE * NANOS_PER_USD) / 100n;
  const ceilDiv = (numerator: bigint) => (numerator + scale - 1n) / scale;
  return { min: ceilDiv(minNanos * rateMicros), max: ceilDiv((maxNanos + 1n) * rateMicros) - 1n };
}

/** USD, in nano-dollars, of a USDT amount in its 6-decimal units: 1:1 (CONTRACT, "Money"). */
export function creditForUsdt(amountMicros: bigint): bigint {
  return amountMicros * 1_000n;
}
