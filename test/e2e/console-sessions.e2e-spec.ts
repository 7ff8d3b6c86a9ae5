import { JwtService } from '@nestjs/jwt';
import { createHash, randomBytes } from 'node:crypto';
import { loadConfig } from 'src/config/app-config';
import { SessionClock } from 'src/modules/auth/session-clock';
import {
  eventually,
  expectError,
  ISO_DATE_TIME,
  PASSWORD,
  uniqueEmail,
  useGatewayWorld,
  UUID,
} from 'test/e2e/e2e-helpers';
import { HttpResult, TestGateway } from 'test/support/gateway';

interface Session {
  accessToken: string;
  refreshToken: string;
}

const NEW_PASSWORD = 'battery staple horse correct';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0';

describe('console sessions', () => {
  // Password-change failures per e-mail are throttled like logins; a low limit shows it without 10 tries.
  const world = useGatewayWorld({ AUTH_FAILURES_PER_EMAIL: '3' });
  // The app's session clock runs `ahead` ms ahead of the real one, so a test moves days or seconds
  // on (past the grace of a traded refresh token, say) instead of waiting.
  let ahead = 0;
  const moveClock = (ms: number) => (ahead += ms);
  beforeEach(() => {
    ahead = 0;
    jest.spyOn(world.gateway.app.get(SessionClock), 'now').mockImplementation(() => new Date(Date.now() + ahead));
  });
  afterEach(() => jest.restoreAllMocks());
  const PAST_GRACE = 11_000;

  const signUp = async (email = uniqueEmail()): Promise<Session & { email: string; accountId: string }> => {
    const response = await world.gateway.call('POST', '/console/auth/register', {
      body: { email, password: PASSWORD },
      headers: { 'user-agent': BROWSER },
    });
    expect(response.status).toBe(201);
    return { ...response.body, email, accountId: response.body.account.id };
  };
  const logIn = async (email: string, password = PASSWORD): Promise<HttpResult> =>
    world.gateway.call('POST', '/console/auth/login', { body: { email, password } });
  const session = async (email: string): Promise<Session> => {
    const response = await logIn(email);
    expect(response.status).toBe(200);
    return response.body;
  };
  const refresh = (refreshToken: unknown) =>
    world.gateway.call('POST', '/console/auth/refresh', { body: { refreshToken } });
  const account = (token: string) => world.gateway.call('GET', '/console/account', { token });
  const sessionRows = async (accountId: string) =>
    (
      await world.db.query(
        'SELECT id, refresh_hash, revoked_at, expires_at FROM console_sessions WHERE account_id = $1 ORDER BY id',
        [accountId],
      )
    ).rows;

  describe('refresh', () => {
    it('should answer the next access and refresh tokens, and refuse the one it replaced', async () => {
      const customer = await signUp();
      const response = await refresh(customer.refreshToken);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        accessToken: expect.any(String),
        expiresIn: 900,
        accessTokenExpiresAt: expect.stringMatching(ISO_DATE_TIME),
        refreshToken: expect.stringMatching(/^gwrt_[A-Za-z0-9_-]{43}$/),
        refreshTokenExpiresAt: expect.stringMatching(ISO_DATE_TIME),
      });
      expect(response.body.refreshToken).not.toBe(customer.refreshToken);
      expect(Date.parse(response.body.accessTokenExpiresAt) - Date.now()).toBeGreaterThan(850_000);
      expect(Date.parse(response.body.refreshTokenExpiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
      expect((await account(response.body.accessToken)).body.id).toBe(customer.accountId);

      moveClock(PAST_GRACE);
      expectError(await refresh(customer.refreshToken), 401, { code: 'invalid_session' });
    });

    it('should keep refresh tokens only as hashes', async () => {
      const customer = await signUp();
      const { rows } = await world.db.query<{ row: string }>(
        'SELECT row_to_json(s)::text AS row FROM console_sessions s WHERE account_id = $1',
        [customer.accountId],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].row).not.toContain(customer.refreshToken);
      expect(rows[0].row).not.toContain(customer.refreshToken.slice(5));
    });

    it('should revoke the whole session when a replaced refresh token comes back', async () => {
      const customer = await signUp();
      const other = await session(customer.email);
      const next: Session = (await refresh(customer.refreshToken)).body;
      expect((await account(next.accessToken)).status).toBe(200);

      moveClock(PAST_GRACE);
      expectError(await refresh(customer.refreshToken), 401, { code: 'invalid_session' });

      // The thief's copy and the rightful holder's newer tokens are both dead now.
      expectError(await refresh(next.refreshToken), 401, { code: 'invalid_session' });
      expectError(await account(next.accessToken), 401, { code: 'invalid_session' });
      expectError(await account(customer.accessToken), 401, { code: 'invalid_session' });
      // Another login of the account is another session: untouched.
      expect((await account(other.accessToken)).status).toBe(200);
      expect((await refresh(other.refreshToken)).status).toBe(200);
    });

    it('should refuse an expired refresh token and leave its session as it was', async () => {
      const customer = await signUp();
      await world.db.query(
        `UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE account_id = $1`,
        [customer.accountId],
      );
      const before = await sessionRows(customer.accountId);

      expectError(await refresh(customer.refreshToken), 401, { code: 'invalid_session' });
      expectError(await account(customer.accessToken), 401, { code: 'invalid_session' });
      expect(await sessionRows(customer.accountId)).toEqual(before);
    });

    it.each<[string, () => string]>([
      ['a well-formed token never issued', () => `gwrt_${randomBytes(32).toString('base64url')}`],
      ['garbage', () => 'not-a-token'],
      ['an empty string', () => ''],
    ])('should answer 401 to %s and change nothing', async (_case, token) => {
      const customer = await signUp();
      const before = await sessionRows(customer.accountId);

      expectError(await refresh(token()), 401, { code: 'invalid_session' });
      expect(await sessionRows(customer.accountId)).toEqual(before);
      expect((await refresh(customer.refreshToken)).status).toBe(200);
    });

    it('should refuse an access token used as refresh token, and a refresh token used as access token', async () => {
      const customer = await signUp();
      // Longer than any refresh token: refused at the edge.
      expectError(await refresh(customer.accessToken), 400, { param: 'refreshToken' });
      expectError(await account(customer.refreshToken), 401, { code: 'invalid_session' });
      expect((await refresh(customer.refreshToken)).status).toBe(200);
    });

    it('should answer 400 naming refreshToken when it is missing or not a string', async () => {
      expectError(await world.gateway.call('POST', '/console/auth/refresh', { body: {} }), 400, {
        param: 'refreshToken',
      });
      expectError(await refresh(42), 400, { param: 'refreshToken' });
    });
  });

  describe('the grace of a traded refresh token, and the end of a session', () => {
    const DAY = 86_400_000;

    it('should give 10 concurrent refreshes with one token the same new pair, and keep the session', async () => {
      const customer = await signUp();
      const answers = await Promise.all(Array.from({ length: 10 }, () => refresh(customer.refreshToken)));

      expect(answers.map((answer) => answer.status)).toEqual(Array<number>(10).fill(200));
      const pair = answers[0].body as Session;
      for (const answer of answers) {
        expect(answer.body).toEqual(answers[0].body);
      }
      const { rows } = await world.db.query(
        'SELECT count(*)::int AS rotations FROM console_retired_refresh_tokens r JOIN console_sessions s ON s.id = r.session_id WHERE s.account_id = $1',
        [customer.accountId],
      );
      expect(rows).toEqual([{ rotations: 1 }]);
      expect((await account(pair.accessToken)).status).toBe(200);

      // Still within the grace: the same pair again, nothing stored readable.
      moveClock(9_000);
      expect((await refresh(customer.refreshToken)).body).toEqual(answers[0].body);
      const stored = JSON.stringify(await sessionRows(customer.accountId));
      expect(stored).not.toContain(pair.refreshToken.slice(5));
      expect((await account(pair.accessToken)).status).toBe(200);
      expect((await refresh(pair.refreshToken)).status).toBe(200);
    });

    it('should revoke the session when a traded token comes back after the grace', async () => {
      const customer = await signUp();
      const next: Session = (await refresh(customer.refreshToken)).body;

      moveClock(PAST_GRACE);
      expectError(await refresh(customer.refreshToken), 401, { code: 'invalid_session' });

      expectError(await refresh(next.refreshToken), 401, { code: 'invalid_session' });
      expectError(await account(next.accessToken), 401, { code: 'invalid_session' });
    });

    it('should revoke the session when a traded token comes back within the grace but after the next trade', async () => {
      const customer = await signUp();
      const next: Session = (await refresh(customer.refreshToken)).body;
      const after: Session = (await refresh(next.refreshToken)).body;

      expectError(await refresh(customer.refreshToken), 401, { code: 'invalid_session' });
      expectError(await account(after.accessToken), 401, { code: 'invalid_session' });
    });

    it('should end a session CONSOLE_SESSION_MAX_DAYS (90) after its login, however often it is refreshed', async () => {
      const customer = await signUp();
      const [{ ends_at: endsAt }] = (
        await world.db.query<{ ends_at: Date }>('SELECT ends_at FROM console_sessions WHERE account_id = $1', [
          customer.accountId,
        ])
      ).rows;
      expect(endsAt.getTime() - Date.now()).toBeGreaterThan(90 * DAY - 60_000);

      let current: Session = customer;
      for (let refreshes = 0; refreshes < 3; refreshes++) {
        moveClock(29 * DAY);
        const response = await refresh(current.refreshToken);
        expect(response.status).toBe(200);
        current = response.body;
      }
      // 87 days in, the refresh token dies with the session, not 30 days on.
      expect((current as Session & { refreshTokenExpiresAt: string }).refreshTokenExpiresAt).toBe(endsAt.toISOString());
      moveClock(3 * DAY - 60_000);
      expect((await account(current.accessToken)).status).toBe(200);

      moveClock(61_000);
      expectError(await account(current.accessToken), 401, { code: 'invalid_session' });
      expectError(await refresh(current.refreshToken), 401, { code: 'invalid_session' });
    });
  });

  describe('cleanup', () => {
    it('should delete expired sessions, with their replaced tokens, as others log in', async () => {
      const customer = await signUp();
      await refresh(customer.refreshToken);
      await world.db.query(`UPDATE console_sessions SET expires_at = now() - interval '1 day' WHERE account_id = $1`, [
        customer.accountId,
      ]);

      await signUp();
      const left = await eventually(
        () => sessionRows(customer.accountId),
        (rows) => rows.length === 0,
        5_000,
      );
      expect(left).toEqual([]);
      const retired = createHash('sha256').update(customer.refreshToken).digest('hex');
      const { rows } = await world.db.query('SELECT 1 FROM console_retired_refresh_tokens WHERE refresh_hash = $1', [
        retired,
      ]);
      expect(rows).toEqual([]);
    });
  });

  describe('access tokens', () => {
    const jwtSecret = loadConfig({ ...process.env }).jwtSecret;

    it('should refuse a token signed with the right secret for another account than its session', async () => {
      const victim = await signUp();
      const attacker = await signUp();
      const { sid } = new JwtService().decode<{ sid: string }>(attacker.accessToken);
      const forged = await new JwtService({ secret: jwtSecret }).signAsync(
        { sub: victim.accountId, sid },
        { expiresIn: 60 },
      );
      const response = await account(forged);
      expectError(response, 401, { code: 'invalid_session' });
      expect(response.text).not.toContain(victim.email);
    });

    it('should refuse a token of the former kind, without a session (issued before sessions could be revoked)', async () => {
      const customer = await signUp();
      const legacy = await new JwtService({ secret: jwtSecret }).signAsync(
        { sub: customer.accountId },
        { expiresIn: '12h' },
      );
      expectError(await account(legacy), 401, { code: 'invalid_session' });
    });

    it('should refuse a token signed with another secret', async () => {
      const customer = await signUp();
      const claims = new JwtService().decode<{ sub: string; sid: string }>(customer.accessToken);
      const forged = await new JwtService({ secret: randomBytes(48).toString('base64') }).signAsync(
        { sub: claims.sub, sid: claims.sid },
        { expiresIn: 60 },
      );
      expectError(await account(forged), 401, { code: 'invalid_session' });
    });
  });

  describe('logout', () => {
    it('should end this session only', async () => {
      const customer = await signUp();
      const other = await session(customer.email);

      const response = await world.gateway.call('POST', '/console/auth/logout', { token: customer.accessToken });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');

      expectError(await account(customer.accessToken), 401, { code: 'invalid_session' });
      expectError(await refresh(customer.refreshToken), 401, { code: 'invalid_session' });
      expect((await account(other.accessToken)).status).toBe(200);
      expect((await refresh(other.refreshToken)).status).toBe(200);
    });

    it('should end every session of the account with logout-all, this one included, and no one else', async () => {
      const customer = await signUp();
      const others = [await session(customer.email), await session(customer.email)];
      const stranger = await signUp();

      const response = await world.gateway.call('POST', '/console/auth/logout-all', { token: others[0].accessToken });
      expect(response.status).toBe(204);

      for (const ended of [customer, ...others]) {
        expectError(await account(ended.accessToken), 401, { code: 'invalid_session' });
        expectError(await refresh(ended.refreshToken), 401, { code: 'invalid_session' });
      }
      expect((await account(stranger.accessToken)).status).toBe(200);
      // Logging in again starts afresh.
      expect((await account((await session(customer.email)).accessToken)).status).toBe(200);
    });

    it('should answer 401 to logout without a live session', async () => {
      expectError(await world.gateway.call('POST', '/console/auth/logout'), 401, { code: 'invalid_session' });
      const customer = await signUp();
      await world.gateway.call('POST', '/console/auth/logout', { token: customer.accessToken });
      expectError(await world.gateway.call('POST', '/console/auth/logout', { token: customer.accessToken }), 401, {
        code: 'invalid_session',
      });
    });
  });

  describe('GET /console/auth/sessions', () => {
    it("should list the account's live sessions, marking the caller's", async () => {
      const customer = await signUp();
      const other = await session(customer.email);
      const ended = await session(customer.email);
      await world.gateway.call('POST', '/console/auth/logout', { token: ended.accessToken });

      const response = await world.gateway.call('GET', '/console/auth/sessions', { token: customer.accessToken });
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(2);
      const mine = response.body.data.find((s: { current: boolean }) => s.current);
      expect(mine).toEqual({
        id: expect.stringMatching(UUID),
        createdAt: expect.stringMatching(ISO_DATE_TIME),
        lastUsedAt: expect.stringMatching(ISO_DATE_TIME),
        expiresAt: expect.stringMatching(ISO_DATE_TIME),
        userAgent: BROWSER,
        clientAddress: '127.0.0.1',
        current: true,
      });
      expect(response.body.data.filter((s: { current: boolean }) => !s.current)).toHaveLength(1);
      const seenByOther = await world.gateway.call('GET', '/console/auth/sessions', { token: other.accessToken });
      expect(seenByOther.body.data.find((s: { current: boolean }) => s.current).id).not.toBe(mine.id);
    });
  });

  describe('DELETE /console/auth/sessions/{sessionId}', () => {
    const sessionIdOf = (accessToken: string) => new JwtService().decode<{ sid: string }>(accessToken).sid;

    it('should end the session picked from the list, and only that one', async () => {
      const customer = await signUp();
      const lost = await session(customer.email);

      const response = await world.gateway.call('DELETE', `/console/auth/sessions/${sessionIdOf(lost.accessToken)}`, {
        token: customer.accessToken,
      });
      expect(response.status).toBe(204);

      expectError(await account(lost.accessToken), 401, { code: 'invalid_session' });
      expectError(await refresh(lost.refreshToken), 401, { code: 'invalid_session' });
      expect((await account(customer.accessToken)).status).toBe(200);
    });

    it("should answer 404 for another account's session, an ended one or an unknown id, and change nothing", async () => {
      const customer = await signUp();
      const stranger = await signUp();
      const strangersSession = sessionIdOf(stranger.accessToken);
      const remove = (id: string) =>
        world.gateway.call('DELETE', `/console/auth/sessions/${id}`, { token: customer.accessToken });

      expectError(await remove(strangersSession), 404, { param: 'sessionId' });
      expect((await account(stranger.accessToken)).status).toBe(200);
      expectError(await remove('7c9e6679-7425-40de-944b-e07fc1f90ae7'), 404, { param: 'sessionId' });
      const ended = await session(customer.email);
      await world.gateway.call('POST', '/console/auth/logout', { token: ended.accessToken });
      expectError(await remove(sessionIdOf(ended.accessToken)), 404, { param: 'sessionId' });
      expectError(await remove('not-a-uuid'), 400, { param: 'sessionId' });
    });
  });

  describe('POST /console/account/password', () => {
    const change = (token: string, body: unknown) =>
      world.gateway.call('POST', '/console/account/password', { token, body });

    it('should change the password, keep the calling session and end every other one', async () => {
      const customer = await signUp();
      const other = await session(customer.email);

      const response = await change(customer.accessToken, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expect(response.status).toBe(204);

      expect((await account(customer.accessToken)).status).toBe(200);
      expect((await refresh(customer.refreshToken)).status).toBe(200);
      expectError(await account(other.accessToken), 401, { code: 'invalid_session' });
      expectError(await refresh(other.refreshToken), 401, { code: 'invalid_session' });
      expectError(await logIn(customer.email, PASSWORD), 401, { code: 'invalid_credentials' });
      expect((await logIn(customer.email, NEW_PASSWORD)).status).toBe(200);
    });

    it('should refuse a wrong current password with 400 naming currentPassword, and change nothing', async () => {
      const customer = await signUp();
      const other = await session(customer.email);
      const before = await sessionRows(customer.accountId);

      const response = await change(customer.accessToken, {
        currentPassword: 'not the password',
        newPassword: NEW_PASSWORD,
      });
      expectError(response, 400, { param: 'currentPassword', code: 'invalid_credentials' });

      expect(await sessionRows(customer.accountId)).toEqual(before);
      expect((await account(other.accessToken)).status).toBe(200);
      expect((await logIn(customer.email, PASSWORD)).status).toBe(200);
      expectError(await logIn(customer.email, NEW_PASSWORD), 401, { code: 'invalid_credentials' });
    });

    it('should throttle wrong current passwords per account like logins (429 with retry-after)', async () => {
      const customer = await signUp();
      for (let attempt = 0; attempt < 3; attempt++) {
        expectError(
          await change(customer.accessToken, { currentPassword: `wrong ${attempt}`, newPassword: NEW_PASSWORD }),
          400,
          {
            param: 'currentPassword',
          },
        );
      }
      const refused = await change(customer.accessToken, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expectError(refused, 429, { type: 'requests', code: 'rate_limit_exceeded' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await logIn(customer.email, PASSWORD)).status).toBe(200);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['a short new password', { currentPassword: PASSWORD, newPassword: 'short' }, 'newPassword'],
      ['a missing new password', { currentPassword: PASSWORD }, 'newPassword'],
      ['the same password again', { currentPassword: PASSWORD, newPassword: PASSWORD }, 'newPassword'],
      ['a missing current password', { newPassword: NEW_PASSWORD }, 'currentPassword'],
    ])('should answer 400 naming the field for %s', async (_case, body, param) => {
      const customer = await signUp();
      expectError(await change(customer.accessToken, body), 400, { param });
      expect((await logIn(customer.email, PASSWORD)).status).toBe(200);
    });

    it('should answer 401 without a live session', async () => {
      expectError(await change('', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }), 401);
    });
  });
});

describe('console sessions with 1-second access tokens', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await TestGateway.start({ CONSOLE_ACCESS_TOKEN_TTL_SECONDS: '1' });
  });
  afterAll(() => gateway.close());

  it('should refuse an expired access token with 401, while its refresh token still gets a new one', async () => {
    const registered = await gateway.call('POST', '/console/auth/register', {
      body: { email: uniqueEmail(), password: PASSWORD },
    });
    expect(registered.body.expiresIn).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2_100));

    expectError(await gateway.call('GET', '/console/account', { token: registered.body.accessToken }), 401, {
      code: 'invalid_session',
    });
    const refreshed = await gateway.call('POST', '/console/auth/refresh', {
      body: { refreshToken: registered.body.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    expect((await gateway.call('GET', '/console/account', { token: refreshed.body.accessToken })).status).toBe(200);
  });
});
