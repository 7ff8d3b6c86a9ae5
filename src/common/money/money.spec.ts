import { formatUsd, parseUsd, tokenCost } from 'src/common/money/money';

describe('money', () => {
  it('should parse exact decimal strings into nano-dollars', () => {
    expect(parseUsd('12.5')).toBe(12_500_000_000n);
    expect(parseUsd('0.000000001')).toBe(1n);
    expect(parseUsd('-3')).toBe(-3_000_000_000n);
    expect(parseUsd('0')).toBe(0n);
  });

  it('should reject floats in disguise, exponents, excess precision and junk', () => {
    for (const bad of ['1e3', '0.0000000001', '1.', '.5', '+1', ' 1', '1,5', 'NaN', '', '--1', '0x10']) {
      expect(parseUsd(bad)).toBeNull();
    }
  });

  it('should format the shortest exact decimal', () => {
    expect(formatUsd(12_500_000_000n)).toBe('12.5');
    expect(formatUsd(1_875n)).toBe('0.000001875');
    expect(formatUsd(0n)).toBe('0');
    expect(formatUsd(-1n)).toBe('-0.000000001');
    expect(formatUsd(25_000_000_000n)).toBe('25');
  });

  it('should round every token cost up to a whole nano-dollar', () => {
    // 1 token at $2.5 per million tokens = $0.0000025 = 2500 nanos exactly.
    expect(tokenCost(1, parseUsd('2.5')!)).toBe(2_500n);
    // 3 tokens at $0.000001 per million = 0.003 nanos → 1 nano.
    expect(tokenCost(3, parseUsd('0.000001')!)).toBe(1n);
    expect(tokenCost(0, parseUsd('10')!)).toBe(0n);
  });
});
