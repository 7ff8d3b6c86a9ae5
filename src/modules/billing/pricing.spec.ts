import { parseUsd } from 'src/common/money/money';
import { referralCredit, usageCost } from 'src/modules/billing/pricing';

const prices = { inputPrice: parseUsd('2.5')!, outputPrice: parseUsd('10')! };

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
