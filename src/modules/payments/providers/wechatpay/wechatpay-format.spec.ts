import {
  amountToFen,
  fenForWire,
  fenToAmount,
  toBeijingTime,
} from 'src/modules/payments/providers/wechatpay/wechatpay-format';

describe('wechatpay-format', () => {
  it.each([
    [1, '0.01'],
    [10, '0.10'],
    [1230, '12.30'],
    [0, '0.00'],
    [100_000_00, '100000.00'],
  ])('should write %p fen as %p', (fen, amount) => {
    expect(fenToAmount(fen)).toBe(amount);
    expect(fenToAmount(BigInt(fen))).toBe(amount);
    expect(amountToFen(amount)).toBe(BigInt(fen));
  });

  it('should refuse fen that are not a whole non-negative number', () => {
    expect(() => fenToAmount(12.5)).toThrow(RangeError);
    expect(() => fenToAmount(-1)).toThrow(RangeError);
    expect(() => fenToAmount(Number.NaN)).toThrow(RangeError);
  });

  it('should write fen for the wire exactly, and refuse what a number cannot hold exactly', () => {
    expect(fenForWire(1230n)).toBe(1230);
    expect(fenForWire(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => fenForWire(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(RangeError);
    expect(() => fenForWire(-1n)).toThrow(RangeError);
  });

  it.each(['12.3', '12', '-1.00', '1.234', '', ' 1.00'])('should refuse the amount %p', (amount) => {
    expect(() => amountToFen(amount)).toThrow(RangeError);
  });

  it('should write time_expire in Beijing time with its offset, to the second', () => {
    expect(toBeijingTime(new Date('2024-01-31T17:04:05.678Z'))).toBe('2024-02-01T01:04:05+08:00');
    expect(toBeijingTime(new Date('2024-06-01T00:00:00Z'))).toBe('2024-06-01T08:00:00+08:00');
  });
});
