import { consoleLink, lowBalanceMail, passwordResetMail, verificationMail } from 'src/modules/mail/mail-messages';

describe('mail messages', () => {
  it('should link the console page with the token in the query', () => {
    expect(consoleLink('https://console.example.com', 'verify-email', 'a-b_c')).toBe(
      'https://console.example.com/verify-email?token=a-b_c',
    );
  });

  it('should put the link in the verification and reset mails', () => {
    const link = 'https://console.example.com/verify-email?token=t';
    expect(verificationMail('ada@example.com', link)).toMatchObject({ to: 'ada@example.com' });
    expect(verificationMail('ada@example.com', link).text).toContain(link);
    expect(passwordResetMail('ada@example.com', link).text).toContain('30 minutes');
  });

  it('should state the balance and the threshold exactly', () => {
    const mail = lowBalanceMail('ada@example.com', 4_500_000_001n, 5_000_000_000n, 'https://console.example.com');
    expect(mail.subject).toBe('Your balance is below $5');
    expect(mail.text).toContain('$4.500000001');
  });
});
