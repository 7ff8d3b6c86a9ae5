/**
 * An account group's price multiplier, held exactly as millionths: "0.8" is 800_000n, "1" is
 * 1_000_000n. Prices are multiplied by it inside the one rounding of a cost (billing/pricing.ts),
 * never rounded on their own.
 */
export const ONE_MULTIPLIER_PPM = 1_000_000n;

/** At most six decimals, from 0.000001 to 100: a wholesale discount or a reseller's markup. */
export const MULTIPLIER_PATTERN = /^(?:0|[1-9]\d{0,2})(?:\.\d{1,6})?$/;
const MAX_PPM = 100n * ONE_MULTIPLIER_PPM;

/** The millionths of a decimal string, or null when it is not a multiplier we accept. */
export function parseMultiplier(text: string): bigint | null {
  if (!MULTIPLIER_PATTERN.test(text)) {
    return null;
  }
  const [whole, fraction = ''] = text.split('.');
  const ppm = BigInt(whole) * ONE_MULTIPLIER_PPM + BigInt(fraction.padEnd(6, '0'));
  return ppm > 0n && ppm <= MAX_PPM ? ppm : null;
}

/** The shortest decimal string of millionths: 800_000n is "0.8", 1_000_000n is "1". */
export function formatMultiplier(ppm: bigint): string {
  const whole = ppm / ONE_MULTIPLIER_PPM;
  const fraction = (ppm % ONE_MULTIPLIER_PPM).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

/**
 * A price (nano-dollars per 1M tokens) times the multiplier, rounded up to a whole nano-dollar as
 * money on the wire must be (CONTRACT, "Money"). For showing only: a bill multiplies inside its one
 * rounding (billing/pricing.ts), so it is never more than these prices say.
 */
export function scaledPrice(nanos: bigint, ppm: bigint): bigint {
  return (nanos * ppm + ONE_MULTIPLIER_PPM - 1n) / ONE_MULTIPLIER_PPM;
}

/** A group row's multiplier: Postgres writes numeric(9,6) with six decimals ("0.800000"), which parses as is. */
export function multiplierPpmOf(group: { priceMultiplier: string }): bigint {
  const ppm = parseMultiplier(group.priceMultiplier);
  if (ppm === null) {
    // The column's check and type keep this from happening; a silent 1× would bill the wrong price.
    throw new Error(`unreadable price multiplier '${group.priceMultiplier}'`);
  }
  return ppm;
}
