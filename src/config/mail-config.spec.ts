import { ConfigError, loadConfig } from 'src/config/app-config';

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }).mail;
const smtp = { SMTP_URL: 'smtp://user:pass@smtp.example.com:587', CONSOLE_URL: 'https://console.example.com/' };

describe('mail configuration', () => {
  it('should send no mail and require no verification without SMTP_URL', () => {
    expect(load({})).toMatchObject({ smtpUrl: null, requireEmailVerification: false });
  });

  it('should require verification by default once mail can be sent, unless turned off', () => {
    expect(load(smtp)).toMatchObject({
      smtpUrl: smtp.SMTP_URL,
      consoleUrl: 'https://console.example.com',
      requireEmailVerification: true,
      attempts: 10,
      retryDelayMs: 10_000,
    });
    expect(load({ ...smtp, REQUIRE_EMAIL_VERIFICATION: 'false' }).requireEmailVerification).toBe(false);
  });

  it('should refuse a requirement nobody could meet, and mail without links', () => {
    expect(() => load({ REQUIRE_EMAIL_VERIFICATION: 'true' })).toThrow(ConfigError);
    expect(() => load({ REQUIRE_EMAIL_VERIFICATION: 'true' })).toThrow(/REQUIRE_EMAIL_VERIFICATION/);
    expect(() => load({ SMTP_URL: smtp.SMTP_URL })).toThrow(/CONSOLE_URL/);
  });

  it('should name a malformed variable', () => {
    expect(() => load({ ...smtp, SMTP_URL: 'http://smtp.example.com' })).toThrow(/SMTP_URL/);
    expect(() => load({ ...smtp, REQUIRE_EMAIL_VERIFICATION: 'yes' })).toThrow(/REQUIRE_EMAIL_VERIFICATION/);
    expect(() => load({ ...smtp, MAIL_ATTEMPTS: '0' })).toThrow(/MAIL_ATTEMPTS/);
  });
});
