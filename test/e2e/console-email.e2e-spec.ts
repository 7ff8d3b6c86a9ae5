import { randomUUID } from 'node:crypto';
import { metrics } from 'src/common/metrics/metrics';
import { TestGateway, TestWorker } from 'test/support/gateway';
import { SmtpSink, tokenOf } from 'test/support/smtp-sink';
import { DataSource } from 'typeorm';

const PASSWORD = 'password-123';
const CONSOLE_URL = 'https://console.example.com';

describe('console e-mail: verification, resend and password reset by mailed links', () => {
  let sink: SmtpSink;
  let gateway: TestGateway;
  let worker: TestWorker;
  let db: DataSource;

  beforeAll(async () => {
    sink = await SmtpSink.create();
    const env = {
      SMTP_URL: sink.url,
      CONSOLE_URL,
      REQUIRE_EMAIL_VERIFICATION: 'true',
      MAIL_RETRY_DELAY_MS: '200',
    };
    gateway = await TestGateway.start(env);
    worker = await TestWorker.start(env);
    db = gateway.app.get(DataSource);
  });

  afterAll(async () => {
    await worker.close();
    await gateway.close();
    await sink.stop();
  });

  async function mailsCounted(kind: string, outcome: string): Promise<number> {
    const { values } = await metrics.mails.get();
    return values.find((value) => value.labels.kind === kind && value.labels.outcome === outcome)?.value ?? 0;
  }

  const newEmail = () => `user-${randomUUID()}@example.com`;

  async function register(email = newEmail()) {
    const registered = await gateway.call('POST', '/console/auth/register', { body: { email, password: PASSWORD } });
    expect(registered.status).toBe(201);
    return { email, token: registered.body.accessToken as string, account: registered.body.account };
  }

  const verify = (token: string) => gateway.call('POST', '/console/auth/verify-email', { body: { token } });
  const createKey = (session: string) => gateway.call('POST', '/console/keys', { token: session, body: { name: 'k' } });
  const login = (email: string, password: string) =>
    gateway.call('POST', '/console/auth/login', { body: { email, password } });

  function expectTokenRefused(answer: { status: number; body: any }) {
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', param: 'token' });
  }

  it('should mail a verification link at registration and refuse keys and top-ups until it is followed', async () => {
    const { email, token: session, account } = await register();
    expect(account.emailVerified).toBe(false);

    const [mail] = await sink.waitFor(email);
    expect(mail.subject).toBe('Confirm your e-mail address');
    expect(mail.text).toContain(`${CONSOLE_URL}/verify-email?token=`);

    const key = await createKey(session);
    expect(key.status).toBe(403);
    expect(key.body.error).toMatchObject({ code: 'email_not_verified', type: 'invalid_request_error' });
    const topup = await gateway.call('POST', '/console/topups', {
      token: session,
      body: { currency: 'USDT', network: 'TRC20', amount: '10' },
    });
    expect(topup.status).toBe(403);
    expect(topup.body.error.code).toBe('email_not_verified');
    const redemption = await gateway.call('POST', '/console/redemptions', { token: session, body: { code: 'X' } });
    expect(redemption.status).toBe(403);
    // Logging in and reading the console work unverified.
    expect((await login(email, PASSWORD)).status).toBe(200);

    const verified = await verify(tokenOf(mail));
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ emailVerified: true });
    expect((await gateway.call('GET', '/console/account', { token: session })).body.emailVerified).toBe(true);
    expect((await createKey(session)).status).toBe(201);

    // The link works once.
    expectTokenRefused(await verify(tokenOf(mail)));
  });

  it('should refuse forged, expired and other-purpose tokens with 400 naming token, changing nothing', async () => {
    const { email, token: session } = await register();
    const [mail] = await sink.waitFor(email);
    const token = tokenOf(mail);

    expectTokenRefused(await verify('forged-token-that-was-never-mailed'));
    expectTokenRefused(await verify(`${token}x`));
    expect((await gateway.call('POST', '/console/auth/verify-email', { body: {} })).body.error.param).toBe('token');
    // A verification token does not reset a password.
    expectTokenRefused(
      await gateway.call('POST', '/console/auth/password-reset/confirm', {
        body: { token, newPassword: 'another-password-1' },
      }),
    );
    expect((await login(email, PASSWORD)).status).toBe(200);

    await db.query(`UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`);
    expectTokenRefused(await verify(token));
    expect((await gateway.call('GET', '/console/account', { token: session })).body.emailVerified).toBe(false);
  });

  it('should throttle resending the verification mail, and refuse it once verified', async () => {
    const { email, token: session } = await register();
    await sink.waitFor(email);
    const resend = () => gateway.call('POST', '/console/auth/verify-email/resend', { token: session });

    const first = await resend();
    expect(first.status).toBe(202);
    const second = await resend();
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);

    const mails = await sink.waitFor(email, 2);
    // Either mail's link works; the newest is followed here.
    expect((await verify(tokenOf(mails[1]))).status).toBe(200);
    const after = await resend();
    expect(after.status).toBe(409);
    expect(after.body.error.code).toBe('email_already_verified');
  });

  it('should register while the SMTP server is down, and deliver the mail once it is back', async () => {
    await sink.stop();
    try {
      const { email, token: session } = await register();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(sink.to(email)).toEqual([]);
      await sink.start();
      const mails = await sink.waitFor(email, 1, 20_000);
      expect(mails).toHaveLength(1);
      // The worker (in this process) failed and backed off before the server came back.
      expect(await mailsCounted('verify-email', 'retried')).toBeGreaterThan(0);
      expect((await verify(tokenOf(mails[0]))).status).toBe(200);
      expect((await createKey(session)).status).toBe(201);
    } finally {
      await sink.start().catch(() => undefined);
    }
  });

  it('should answer a reset the same for known and unknown addresses, and mail only the known one', async () => {
    const { email } = await register();
    const unknown = newEmail();
    const reset = (address: string) =>
      gateway.call('POST', '/console/auth/password-reset', { body: { email: address } });

    const known = await reset(email);
    const stranger = await reset(unknown);
    expect(known.status).toBe(202);
    expect(stranger.status).toBe(known.status);
    expect(stranger.body).toEqual(known.body);

    const mails = await sink.waitFor(email, 2); // the verification mail, then the reset
    const resetMail = mails.find((mail) => mail.subject === 'Reset your password')!;
    expect(resetMail.text).toContain(`${CONSOLE_URL}/reset-password?token=`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.to(unknown)).toEqual([]);
  });

  it('should set the password once with the mailed token, within its 30 minutes, ending every session', async () => {
    const { email, token: session } = await register();
    const refreshToken = (await login(email, PASSWORD)).body.refreshToken as string;
    await sink.waitFor(email);
    expect((await gateway.call('POST', '/console/auth/password-reset', { body: { email } })).status).toBe(202);
    const [, resetMail] = await sink.waitFor(email, 2);
    const token = tokenOf(resetMail);
    const confirm = (newPassword: string) =>
      gateway.call('POST', '/console/auth/password-reset/confirm', { body: { token, newPassword } });

    // A verify-email token's purpose differs: refused, and nothing changes.
    expectTokenRefused(await verify(token));
    expect((await confirm('brand-new-password')).status).toBe(204);
    // Whoever knew the old password held these: both sessions end with the reset.
    expect((await gateway.call('GET', '/console/account', { token: session })).status).toBe(401);
    expect((await gateway.call('POST', '/console/auth/refresh', { body: { refreshToken } })).status).toBe(401);
    expect((await login(email, PASSWORD)).status).toBe(401);
    expect((await login(email, 'brand-new-password')).status).toBe(200);

    expectTokenRefused(await confirm('third-password-here'));
    expect((await login(email, 'brand-new-password')).status).toBe(200);

    // A second reset whose link expired changes nothing.
    await gateway.call('POST', '/console/auth/password-reset', { body: { email } });
    const [, , expiredMail] = await sink.waitFor(email, 3);
    await db.query(`UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`);
    expectTokenRefused(
      await gateway.call('POST', '/console/auth/password-reset/confirm', {
        body: { token: tokenOf(expiredMail), newPassword: 'expired-password-1' },
      }),
    );
    expect((await login(email, 'brand-new-password')).status).toBe(200);
  });

  it('should throttle reset mails per address', async () => {
    const email = newEmail();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await gateway.call('POST', '/console/auth/password-reset', { body: { email } })).status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
  });
});
