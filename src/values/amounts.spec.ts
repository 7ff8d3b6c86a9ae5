import { formatAmount, parseAmount } from 'src/values/amounts';

describe('amounts', () => {
  it('should read CNY amounts in fen, with at most two places', () => {
    expect(parseAmount('100', 'CNY')).toBe(10_000n);
    expect(parseAmount('99.9', 'CNY')).toBe(9_990n);
    expect(parseAmount('0.01', 'CNY')).toBe(1n);
    expect(parseAmount('12.345', 'CNY')).toBeNull();
  });

  it('should refuse what is not a plain positive decimal', () => {
    for (const text of ['0', '0.00', '-1', '+1', '1e3', '1.', '.5', ' 1', '1 ', '0x10', 'NaN', '', '1,5', '１']) {
      expect(parseAmount(text, 'CNY')).toBeNull();
    }
    expect(parseAmount('1234567890123', 'CNY')).toBeNull();
  });

  it('should read USDT with six places', () => {
    expect(parseAmount('5.123456', 'USDT')).toBe(5_123_456n);
    expect(parseAmount('5.1234567', 'USDT')).toBeNull();
  });

  it("should write amounts with the currency's places", () => {
    expect(formatAmount(1_230n, 'CNY')).toBe('12.30');
    expect(formatAmount(1n, 'CNY')).toBe('0.01');
    expect(formatAmount(5_000_000n, 'USDT')).toBe('5.000000');
    expect(formatAmount(2_500_000_000n, 'USD')).toBe('2.5');
    expect(formatAmount(10_000_000_000n, 'USD')).toBe('10');
  });
});
