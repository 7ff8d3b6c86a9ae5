import { cnyRangeFor, creditForCny, creditForUsdt, formatRate, parseRate } from 'src/common/money/topup-amounts';

describe('top-up rates and credits', () => {
  it('should read and write rates exactly', () => {
    expect(parseRate('7.2')).toBe(7_200_000n);
    expect(formatRate(7_200_000n)).toBe('7.2');
    expect(formatRate(7_000_000n)).toBe('7');
    for (const text of ['0', '-7', '7.1234567', '7e0', '']) {
      expect(parseRate(text)).toBeNull();
    }
  });

  it('should credit amount ÷ rate, rounded down to a nano-dollar', () => {
    // 100 CNY at 7.2 = 13.888888888… USD
    expect(creditForCny(10_000n, 7_200_000n)).toBe(13_888_888_888n);
    // 72 CNY at 7.2 = exactly 10 USD
    expect(creditForCny(7_200n, 7_200_000n)).toBe(10_000_000_000n);
    // 0.01 CNY at 7.123456 = 0.0014038121… USD
    expect(creditForCny(1n, 7_123_456n)).toBe(1_403_812n);
  });

  it('should give the CNY range whose credits lie within the USD bounds', () => {
    // 1 to 10,000 USD at 7.2: 7.20 to 72,000.00 CNY.
    expect(cnyRangeFor(1_000_000_000n, 10_000_000_000_000n, 7_200_000n)).toEqual({ min: 720n, max: 7_200_000n });
    // 1 to 100 USD at 7.3: 7.30 buys 1 USD; 730.00 buys 100 USD, and 730.01 100.001369… USD.
    expect(cnyRangeFor(1_000_000_000n, 100_000_000_000n, 7_300_000n)).toEqual({ min: 730n, max: 73_000n });
  });

  it('should put the range exactly at the bounds, whatever the rate', () => {
    const bounds = [1n, 999_999_999n, 1_000_000_000n, 1_000_000_001n, 123_456_789_012n];
    for (const rate of [1n, 999_999n, 7_123_456n, 7_300_000n, 6_999_999_999n]) {
      for (const minNanos of bounds) {
        for (const maxNanos of bounds.filter((bound) => bound >= minNanos)) {
          const { min, max } = cnyRangeFor(minNanos, maxNanos, rate);
          const context = { rate, minNanos, maxNanos };
          expect({ ...context, credit: creditForCny(min, rate) >= minNanos }).toEqual({ ...context, credit: true });
          expect({ ...context, below: creditForCny(min - 1n, rate) < minNanos }).toEqual({ ...context, below: true });
          expect({ ...context, credit: creditForCny(max, rate) <= maxNanos }).toEqual({ ...context, credit: true });
          expect({ ...context, above: creditForCny(max + 1n, rate) > maxNanos }).toEqual({ ...context, above: true });
        }
      }
    }
  });

  it('should credit USDT 1:1', () => {
    expect(creditForUsdt(5_123_456n)).toBe(5_123_456_000n);
  });
});
