import {
  CODE_LENGTH,
  hashRedemptionCode,
  newRedemptionCode,
  normalizeRedemptionCode,
} from 'src/modules/payments/redemptions/redemption-codes';

describe('redemption codes', () => {
  it('should make codes of 20 unambiguous characters in groups of five', () => {
    const code = newRedemptionCode();
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{5}(-[A-HJ-NP-Z2-9]{5}){3}$/);
    expect(normalizeRedemptionCode(code)).toHaveLength(CODE_LENGTH);
  });

  it('should never repeat a code', () => {
    const codes = new Set(Array.from({ length: 10_000 }, () => newRedemptionCode()));
    expect(codes.size).toBe(10_000);
  });

  it('should accept a code typed in lower case, without dashes or with spaces', () => {
    const code = newRedemptionCode();
    const expected = normalizeRedemptionCode(code);
    expect(normalizeRedemptionCode(code.toLowerCase())).toBe(expected);
    expect(normalizeRedemptionCode(code.replace(/-/g, ''))).toBe(expected);
    expect(normalizeRedemptionCode(` ${code.replace(/-/g, ' ')} `)).toBe(expected);
  });

  it('should refuse what cannot be a code', () => {
    for (const typed of [
      '',
      'ABCDE',
      'ABCDE-FGHJK-LMNPQ-RSTU0',
      'ABCDE-FGHJK-LMNPQ-RSTUVW',
      'ÄBCDE-FGHJK-LMNPQ-RSTUV',
    ]) {
      expect(normalizeRedemptionCode(typed)).toBeNull();
    }
  });

  it('should store a hash, not the code', () => {
    const normalized = normalizeRedemptionCode(newRedemptionCode())!;
    const hash = hashRedemptionCode(normalized);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(normalized);
  });
});
