import { parseUsd } from 'src/common/money/money';
import { referralCredit, splitUsageCost, usageCost, worstCaseCost } from 'src/modules/billing/pricing';

const prices = { inputPrice: parseUsd('2.5')!, outputPrice: parseUsd('10')! };
const split = { ...prices, cachedInputPrice: parseUsd('0.25')!, cacheWriteInputPrice: parseUsd('3.125')! };

describe('pricing', () => {
  it('should charge prompt and completion tokens at their own prices', () => {
    // 1000 × $2.5/M + 500 × $10/M = $0.0025 + $0.005
    expect(usageCost(prices, 1000, 500)).toBe(parseUsd('0.0075'));
  });

  it('should round the sum up once, to a whole nano-dollar', () => {
    const tiny = { inputPrice: parseUsd('0.0000003')!, outputPrice: parseUsd('0.0000003')! };
    // 1 × 300 + 1 × 300 = 600 nano-per-million → 0.0006 nanos → 1 nano (not 2, as rounding each term would give).
    expect(usageCost(tiny, 1, 1)).toBe(1n);
    expect(usageCost(tiny, 0, 0)).toBe(0n);
  });

  it('should round the referral credit down', () => {
    expect(referralCredit(19n, 10)).toBe(1n);
    expect(referralCredit(7_500_000n, 10)).toBe(750_000n);
    expect(referralCredit(9n, 10)).toBe(0n);
  });
});

describe(splitUsageCost.name, () => {
  it('should price uncached, cached and cache-write prompt tokens and completion tokens each at their own price', () => {
    // 600 uncached × $2.5 + 300 cached × $0.25 + 100 written × $3.125 + 50 × $10, per million:
    // 1,500,000,000 + 75,000,000 + 312,500,000 + 500,000,000 = 2,387,500,000 → $0.0023875
    const cost = splitUsageCost(split, {
      promptTokens: 1000,
      cachedTokens: 300,
      cacheWriteTokens: 100,
      completionTokens: 50,
    });
    expect(cost).toBe(parseUsd('0.0023875'));
  });

  it('should round the sum up once, never each part', () => {
    const tiny = {
      inputPrice: 300n,
      outputPrice: 300n,
      cachedInputPrice: 300n,
      cacheWriteInputPrice: 300n,
    };
    // Four parts of 300 nano-per-million: 1200 → 0.0012 nanos → 1 nano, where rounding each would give 4.
    expect(splitUsageCost(tiny, { promptTokens: 3, cachedTokens: 1, cacheWriteTokens: 1, completionTokens: 1 })).toBe(
      1n,
    );
    expect(splitUsageCost(tiny, { promptTokens: 0, completionTokens: 0 })).toBe(0n);
  });

  it('should stay exact far beyond the range of a double', () => {
    const dear = { inputPrice: 999_999_999_999_999n, outputPrice: 999_999_999_999_999n, cachedInputPrice: 1n };
    const tokens = { promptTokens: 2_000_000_000, cachedTokens: 1_999_999_999, completionTokens: 2_000_000_000 };
    // (1 × 999,999,999,999,999 + 1,999,999,999 × 1 + 2e9 × 999,999,999,999,999) / 1e6, rounded up.
    const scaled = 999_999_999_999_999n + 1_999_999_999n + 2_000_000_000n * 999_999_999_999_999n;
    expect(splitUsageCost(dear, tokens)).toBe((scaled + 999_999n) / 1_000_000n);
  });

  it('should charge cached and cache-write tokens the input price when the model has no prices for them', () => {
    const tokens = { promptTokens: 1000, cachedTokens: 300, cacheWriteTokens: 100, completionTokens: 50 };
    expect(splitUsageCost(prices, tokens)).toBe(usageCost(prices, 1000, 50));
    expect(splitUsageCost({ ...prices, cachedInputPrice: null, cacheWriteInputPrice: null }, tokens)).toBe(
      usageCost(prices, 1000, 50),
    );
  });

  it('should equal the plain cost when the upstream reported no split', () => {
    expect(splitUsageCost(split, { promptTokens: 1000, completionTokens: 500 })).toBe(usageCost(prices, 1000, 500));
  });

  it('should never bill a token twice when an upstream reports more cached tokens than prompt tokens', () => {
    const cost = splitUsageCost(split, { promptTokens: 10, cachedTokens: 8, cacheWriteTokens: 8, completionTokens: 0 });
    // 8 cached × $0.25/M + 2 written (the rest of the prompt) × $3.125/M: 2,000 + 6,250 nanos.
    expect(cost).toBe(8_250n);
    expect(splitUsageCost(split, { promptTokens: 1_000_000, cachedTokens: 2_000_000, completionTokens: 0 })).toBe(
      parseUsd('0.25'),
    );
  });
});

describe(worstCaseCost.name, () => {
  it('should hold every prompt token at the dearest prompt price', () => {
    expect(worstCaseCost(split, 1000, 10)).toBe(
      usageCost({ inputPrice: parseUsd('3.125')!, outputPrice: prices.outputPrice }, 1000, 10),
    );
    expect(worstCaseCost(prices, 1000, 10)).toBe(usageCost(prices, 1000, 10));
    expect(worstCaseCost({ ...prices, cachedInputPrice: parseUsd('0.25')! }, 1000, 10)).toBe(
      usageCost(prices, 1000, 10),
    );
  });

  it('should cover any split the upstream may report', () => {
    for (const [cachedTokens, cacheWriteTokens] of [
      [0, 0],
      [1000, 0],
      [0, 1000],
      [400, 600],
      [999, 1],
    ]) {
      const billed = splitUsageCost(split, {
        promptTokens: 1000,
        cachedTokens,
        cacheWriteTokens,
        completionTokens: 10,
      });
      expect(billed).toBeLessThanOrEqual(worstCaseCost(split, 1000, 10));
    }
  });
});

describe('a group price multiplier', () => {
  const prices = { inputPrice: 2_500_000_000n, outputPrice: 10_000_000_000n, cachedInputPrice: 1_250_000_000n };

  it('should scale the cost inside the one rounding, not the prices before it', () => {
    // 7 × 2.5 $/1M × 0.8 = 14_000 nano-dollars exactly; 3 × 10 $/1M × 0.8 = 24_000.
    expect(usageCost(prices, 7, 3, 800_000n)).toBe(38_000n);
    // 333 nano-dollars per 1M tokens × 1 token × 0.7 is 0.0002331 nano-dollars: rounded up once, to 1.
    expect(usageCost({ inputPrice: 333n, outputPrice: 0n }, 1, 0, 700_000n)).toBe(1n);
    // Rounded per part the sum would be 2; rounded once it is 1.
    const cheap = { inputPrice: 600_000n, outputPrice: 600_000n };
    expect(usageCost(cheap, 1, 0, 800_000n) + usageCost(cheap, 0, 1, 800_000n)).toBe(2n);
    expect(usageCost(cheap, 1, 1, 800_000n)).toBe(1n);
  });

  it('should leave 1× exactly as without a multiplier', () => {
    const tokens = { promptTokens: 1_234, completionTokens: 567, cachedTokens: 1_000 };
    expect(splitUsageCost(prices, tokens, 1_000_000n)).toBe(splitUsageCost(prices, tokens));
    expect(worstCaseCost(prices, 1_234, 567, 1_000_000n)).toBe(worstCaseCost(prices, 1_234, 567));
  });

  it('should hold and charge with the same multiplier, so the hold still covers the charge', () => {
    const tokens = { promptTokens: 1_234, completionTokens: 567, cachedTokens: 1_000 };
    const charge = splitUsageCost(prices, tokens, 800_000n);
    expect(charge).toBeLessThanOrEqual(worstCaseCost(prices, 1_234, 567, 800_000n));
    // (234 × $2.5 + 1000 × $1.25 + 567 × $10) / 1M = $0.007505; × 0.8 = $0.006004.
    expect(charge).toBe(6_004_000n);
    expect(splitUsageCost(prices, tokens)).toBe(7_505_000n);
  });
});
