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
