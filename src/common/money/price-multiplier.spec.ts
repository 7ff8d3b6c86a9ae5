import { formatMultiplier, scaledPrice, parseMultiplier } from 'src/common/money/price-multiplier';

describe('price multipliers', () => {
  it('reads decimal strings exactly as millionths', () => {
    expect(parseMultiplier('1')).toBe(1_000_000n);
    expect(parseMultiplier('0.8')).toBe(800_000n);
    expect(parseMultiplier('1.25')).toBe(1_250_000n);
    expect(parseMultiplier('0.000001')).toBe(1n);
    expect(parseMultiplier('100')).toBe(100_000_000n);
    // A float would give 0.7 * 1e6 = 699999.9999999999.
    expect(parseMultiplier('0.7')).toBe(700_000n);
  });

  it('refuses what is not a positive multiplier of at most six decimals up to 100', () => {
    for (const text of ['0', '0.0', '-1', '1.0000001', '100.000001', '1e-3', '.5', '01', ' 1', '1.', 'NaN', '']) {
      expect(parseMultiplier(text)).toBeNull();
    }
  });

  it('writes the shortest decimal back', () => {
    expect(formatMultiplier(800_000n)).toBe('0.8');
    expect(formatMultiplier(1_000_000n)).toBe('1');
    expect(formatMultiplier(1_250_000n)).toBe('1.25');
    expect(formatMultiplier(1n)).toBe('0.000001');
    expect(formatMultiplier(parseMultiplier('12.345678')!)).toBe('12.345678');
  });
});

describe('scaledPrice', () => {
  it('shows a price times a multiplier, rounded up to a nano-dollar only when it is not whole', () => {
    expect(scaledPrice(2_500_000_000n, 800_000n)).toBe(2_000_000_000n);
    expect(scaledPrice(2_500_000_000n, 1_000_000n)).toBe(2_500_000_000n);
    expect(scaledPrice(333n, 700_000n)).toBe(234n);
    expect(scaledPrice(0n, 800_000n)).toBe(0n);
  });
});
