import { maskedEmail } from 'src/modules/referrals/masked-email';

describe(maskedEmail.name, () => {
  it('should keep the first character and the domain only', () => {
    expect(maskedEmail('ada.lovelace@example.com')).toBe('a***@example.com');
    expect(maskedEmail('b@example.org')).toBe('b***@example.org');
  });

  it('should hide everything of an address without a local part or domain', () => {
    expect(maskedEmail('@example.com')).toBe('***');
    expect(maskedEmail('nobody')).toBe('***');
  });
});
