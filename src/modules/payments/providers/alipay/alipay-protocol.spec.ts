import {
  beijingTime,
  isPaidStatus,
  parseBeijingTime,
  responseKeyOf,
} from 'src/modules/payments/providers/alipay/alipay-protocol';

describe('beijingTime', () => {
  it('should write the instant in UTC+8, rolling over the date', () => {
    expect(beijingTime(new Date('2024-12-31T16:30:05.999Z'))).toBe('2025-01-01 00:30:05');
    expect(beijingTime(new Date('2024-06-01T03:04:05Z'))).toBe('2024-06-01 11:04:05');
  });

  it('should read back the instant it wrote, to the second', () => {
    const date = new Date('2024-02-29T20:00:01Z');

    expect(parseBeijingTime(beijingTime(date))).toEqual(date);
    expect(parseBeijingTime('2024-02-29T20:00:01')).toBeNull();
    expect(parseBeijingTime('2024-13-40 99:00:00')).toBeNull();
  });
});

describe('responseKeyOf', () => {
  it("should name the member that holds a method's response", () => {
    expect(responseKeyOf('alipay.trade.precreate')).toBe('alipay_trade_precreate_response');
  });
});

describe('isPaidStatus', () => {
  it('should count only TRADE_SUCCESS and TRADE_FINISHED as paid', () => {
    expect(['TRADE_SUCCESS', 'TRADE_FINISHED', 'WAIT_BUYER_PAY', 'TRADE_CLOSED'].map(isPaidStatus)).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
