import { randomUUID } from 'node:crypto';
import {
  expectError,
  ISO_DATE_TIME,
  PASSWORD,
  register,
  uniqueEmail,
  useGatewayWorld,
  UUID,
} from 'test/e2e/e2e-helpers';

/** The session fields login and registration answer beside the account. */
const SESSION_TOKENS = {
  accessToken: expect.any(String),
  expiresIn: 900,
  accessTokenExpiresAt: expect.stringMatching(ISO_DATE_TIME),
  refreshToken: expect.stringMatching(/^gwrt_[A-Za-z0-9_-]{43}$/),
  refreshTokenExpiresAt: expect.stringMatching(ISO_DATE_TIME),
};

describe('console auth', () => {
  const world = useGatewayWorld();

  const registerRaw = (body: unknown) => world.gateway.call('POST', '/console/auth/register', { body });
  const login = (email: string, password: string) =>
    world.gateway.call('POST', '/console/auth/login', { body: { email, password } });

  describe('registration', () => {
    it('should create an account with a zero balance and answer 201 with a session', async () => {
      const email = uniqueEmail('ada');
      const before = Date.now();
      const response = await registerRaw({ email, password: PASSWORD });

      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        ...SESSION_TOKENS,
        account: {
          id: expect.stringMatching(UUID),
          email,
          balance: '0',
          referralCode: expect.stringMatching(/^\S{4,}$/),
          emailVerified: false,
          createdAt: expect.stringMatching(ISO_DATE_TIME),
        },
      });
      expect(response.body.accessToken.length).toBeGreaterThan(20);
      const createdAt = Date.parse(response.body.account.createdAt);
      expect(createdAt).toBeGreaterThanOrEqual(before - 5_000);
      expect(createdAt).toBeLessThanOrEqual(Date.now() + 5_000);
    });

    it('should give every account its own referral code', async () => {
      const first = await register(world.gateway);
      const second = await register(world.gateway);
      expect(first.account.referralCode).not.toBe(second.account.referralCode);
      expect(first.account.id).not.toBe(second.account.id);
    });

    it('should treat e-mail addresses case-insensitively and refuse a second account with 409', async () => {
      const local = `Ada-${randomUUID()}`;
      const first = await registerRaw({ email: `${local}@X.com`, password: PASSWORD });
      expect(first.status).toBe(201);
      expect(first.body.account.email.toLowerCase()).toBe(`${local}@x.com`.toLowerCase());

      const second = await registerRaw({ email: `${local.toLowerCase()}@x.com`, password: 'another-password' });
      expectError(second, 409, { param: 'email' });

      const third = await registerRaw({ email: `${local.toUpperCase()}@X.COM`, password: PASSWORD });
      expectError(third, 409, { param: 'email' });

      const { rows } = await world.db.query('SELECT id FROM accounts WHERE lower(email) = lower($1)', [
        `${local}@x.com`,
      ]);
      expect(rows).toEqual([{ id: first.body.account.id }]);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['an invalid e-mail', { email: 'not-an-email', password: PASSWORD }, 'email'],
      ['an e-mail without domain', { email: 'ada@', password: PASSWORD }, 'email'],
      ['a non-string e-mail', { email: 42, password: PASSWORD }, 'email'],
      ['a missing e-mail', { password: PASSWORD }, 'email'],
      ['a short password', { email: uniqueEmail(), password: 'short' }, 'password'],
      ['a 7-character password', { email: uniqueEmail(), password: '1234567' }, 'password'],
      ['a missing password', { email: uniqueEmail() }, 'password'],
      ['a non-string password', { email: uniqueEmail(), password: 12345678 }, 'password'],
      ['an unknown extra field', { email: uniqueEmail(), password: PASSWORD, isAdmin: true }, 'isAdmin'],
      ['a non-string referral code', { email: uniqueEmail(), password: PASSWORD, referralCode: 7 }, 'referralCode'],
    ])('should answer 400 naming the field for %s', async (_case, body, param) => {
      const response = await registerRaw(body);
      expectError(response, 400, { param });
      if (typeof body.email === 'string') {
        const { rows } = await world.db.query('SELECT 1 FROM accounts WHERE lower(email) = lower($1)', [body.email]);
        expect(rows).toHaveLength(0);
      }
    });

    it('should answer 400 in the error shape to an empty or unparsable body', async () => {
      expectError(await registerRaw({}), 400);
      expectError(await registerRaw('{"email": '), 400);
    });

    it('should not store the password in clear', async () => {
      const password = `secret-${randomUUID()}`;
      const email = uniqueEmail();
      const response = await registerRaw({ email, password });
      expect(response.status).toBe(201);

      const { rows } = await world.db.query<{ password_hash: string; row: string }>(
        'SELECT password_hash, row_to_json(a)::text AS row FROM accounts a WHERE id = $1',
        [response.body.account.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].password_hash).not.toContain(password);
      expect(rows[0].password_hash).not.toContain(Buffer.from(password).toString('base64'));
      expect(rows[0].password_hash.length).toBeGreaterThanOrEqual(32);
      expect(rows[0].row).not.toContain(password);
      expect(response.text).not.toContain(password);
    });

    it('should salt password hashes, so equal passwords do not give equal hashes', async () => {
      const first = await register(world.gateway);
      const second = await register(world.gateway);
      const { rows } = await world.db.query<{ password_hash: string }>(
        'SELECT password_hash FROM accounts WHERE id = ANY($1::uuid[])',
        [[first.account.id, second.account.id]],
      );
      expect(rows).toHaveLength(2);
      expect(rows[0].password_hash).not.toBe(rows[1].password_hash);
    });
  });

  describe('referrals', () => {
    it("should record the referrer when registering with an existing account's referral code", async () => {
      const referrer = await register(world.gateway);
      const invitee = await register(world.gateway, uniqueEmail('invitee'), {
        referralCode: referrer.account.referralCode,
      });

      const { rows } = await world.db.query('SELECT referred_by FROM accounts WHERE id = $1', [invitee.account.id]);
      expect(rows).toEqual([{ referred_by: referrer.account.id }]);
      expect(invitee.account.referralCode).not.toBe(referrer.account.referralCode);
    });

    it('should accept a referral code typed in lower case', async () => {
      const referrer = await register(world.gateway);
      const invitee = await register(world.gateway, uniqueEmail('invitee'), {
        referralCode: referrer.account.referralCode.toLowerCase(),
      });
      const { rows } = await world.db.query('SELECT referred_by FROM accounts WHERE id = $1', [invitee.account.id]);
      expect(rows).toEqual([{ referred_by: referrer.account.id }]);
    });

    it('should leave referred_by empty without a referral code', async () => {
      const account = await register(world.gateway);
      const { rows } = await world.db.query('SELECT referred_by FROM accounts WHERE id = $1', [account.account.id]);
      expect(rows).toEqual([{ referred_by: null }]);
    });

    it('should answer 400 naming referralCode for an unknown code, and create no account', async () => {
      const email = uniqueEmail();
      const response = await registerRaw({ email, password: PASSWORD, referralCode: 'NOSUCHCODE' });
      expectError(response, 400, { param: 'referralCode' });

      // The address is still free.
      const retry = await registerRaw({ email, password: PASSWORD });
      expect(retry.status).toBe(201);
    });
  });

  describe('login', () => {
    let email: string;
    let accountId: string;

    beforeAll(async () => {
      email = `Grace-${randomUUID()}@Example.com`;
      const registered = await register(world.gateway, email);
      accountId = registered.account.id;
    });

    it.each([
      ['as registered', (e: string) => e],
      ['in lower case', (e: string) => e.toLowerCase()],
      ['in upper case', (e: string) => e.toUpperCase()],
    ])('should answer 200 with a working session for the right password, e-mail %s', async (_case, spell) => {
      const response = await login(spell(email), PASSWORD);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        ...SESSION_TOKENS,
        account: {
          id: accountId,
          email: expect.any(String),
          balance: '0',
          referralCode: expect.any(String),
          emailVerified: false,
          createdAt: expect.stringMatching(ISO_DATE_TIME),
        },
      });
      expect(response.body.account.email.toLowerCase()).toBe(email.toLowerCase());

      const account = await world.gateway.call('GET', '/console/account', { token: response.body.accessToken });
      expect(account.status).toBe(200);
      expect(account.body.id).toBe(accountId);
    });

    it('should answer 401 invalid_credentials to a wrong password', async () => {
      const response = await login(email, `${PASSWORD}!`);
      expectError(response, 401, { code: 'invalid_credentials' });
      expect(response.text).not.toContain('accessToken');
    });

    it('should answer 401 invalid_credentials to an unknown e-mail, the same way as to a wrong password', async () => {
      const unknown = await login(uniqueEmail('nobody'), PASSWORD);
      expectError(unknown, 401, { code: 'invalid_credentials' });
      const wrong = await login(email, 'wrong-password');
      expect(unknown.body).toEqual(wrong.body);
    });

    it('should answer 400 naming the field when login is missing a field', async () => {
      expectError(await world.gateway.call('POST', '/console/auth/login', { body: { email } }), 400, {
        param: 'password',
      });
      expectError(await world.gateway.call('POST', '/console/auth/login', { body: { password: PASSWORD } }), 400, {
        param: 'email',
      });
    });
  });

  describe('GET /console/account', () => {
    it('should return the account of the session', async () => {
      const registered = await register(world.gateway);
      const response = await world.gateway.call('GET', '/console/account', { token: registered.token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(registered.account);
    });

    it('should answer 401 in the error shape without a token', async () => {
      expectError(await world.gateway.call('GET', '/console/account'), 401);
    });

    it.each([
      ['garbage', 'not-a-jwt'],
      ['an empty JWT-like value', 'a.b.c'],
      ['an API key', `sk-${'A'.repeat(48)}`],
      ['the admin token', process.env.ADMIN_TOKEN ?? 'test-admin-token-0123456789'],
    ])('should answer 401 in the error shape to %s as token', async (_case, token) => {
      expectError(await world.gateway.call('GET', '/console/account', { token }), 401);
    });

    it('should answer 401 to a tampered token that claims another account', async () => {
      const victim = await register(world.gateway);
      const attacker = await register(world.gateway);
      const [header, payload, signature] = attacker.token.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      expect(claims.sub).toBe(attacker.account.id);
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: victim.account.id })).toString('base64url');

      const response = await world.gateway.call('GET', '/console/account', {
        token: `${header}.${forged}.${signature}`,
      });
      expectError(response, 401);
      expect(response.text).not.toContain(victim.account.email);
    });

    it('should answer 401 to a token with a corrupted signature', async () => {
      const registered = await register(world.gateway);
      const [header, payload, signature] = registered.token.split('.');
      const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
      expectError(
        await world.gateway.call('GET', '/console/account', { token: `${header}.${payload}.${flipped}` }),
        401,
      );
    });

    it('should answer 401 to an unsigned ("alg: none") token', async () => {
      const registered = await register(world.gateway);
      const [, payload] = registered.token.split('.');
      const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      expectError(await world.gateway.call('GET', '/console/account', { token: `${none}.${payload}.` }), 401);
    });

    it('should answer 401 when the scheme is not Bearer', async () => {
      const registered = await register(world.gateway);
      const response = await world.gateway.call('GET', '/console/account', {
        headers: { authorization: `Token ${registered.token}` },
      });
      expectError(response, 401);
    });
  });
});
