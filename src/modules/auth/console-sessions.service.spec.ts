import { JwtService } from '@nestjs/jwt';
import { ApiError } from 'src/common/errors/api-error';
import { ConsoleSessionsRepository } from 'src/modules/auth/console-sessions.repository';
import { ConsoleSessions } from 'src/modules/auth/console-sessions.service';
import { SessionClock } from 'src/modules/auth/session-clock';
import { newRefreshToken, refreshTokenHash } from 'src/modules/auth/session-tokens';
import { newTestService, TestService } from 'test/support/test-service';

const ACCOUNT = '0b6f5c1e-2d3a-4b5c-8d9e-0f1a2b3c4d5e';
const SESSION = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const NOW = new Date('2026-03-01T12:00:00.250Z');
const DAY = 86_400_000;
const later = (ms: number) => new Date(NOW.getTime() + ms);

describe(ConsoleSessions.name, () => {
  let test: TestService<ConsoleSessions>;
  let sut: ConsoleSessions;
  let repository: jest.Mocked<ConsoleSessionsRepository>;
  let jwt: jest.Mocked<JwtService>;
  let clock: jest.Mocked<SessionClock>;

  const expectInvalidSession = async (promise: Promise<unknown>) => {
    const error: unknown = await promise.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toBody().error).toMatchObject({ code: 'invalid_session', param: null });
    expect((error as ApiError).status).toBe(401);
  };

  beforeEach(async () => {
    test = await newTestService(ConsoleSessions);
    sut = test.sut;
    repository = test.mock(ConsoleSessionsRepository);
    jwt = test.mock(JwtService);
    // The access token is its claims: two signings give the same token exactly when the claims agree.
    jwt.signAsync.mockImplementation((payload) => Promise.resolve(JSON.stringify(payload)));
    repository.deleteExpired.mockResolvedValue();
    clock = test.mock(SessionClock);
    clock.now.mockReturnValue(NOW);
  });

  describe('open', () => {
    beforeEach(() => {
      repository.create.mockImplementation((values) => Promise.resolve({ ...values, id: SESSION } as never));
    });

    it('should end the session CONSOLE_SESSION_MAX_DAYS after the login, and its first refresh token with the idle time', async () => {
      const tokens = await sut.open(ACCOUNT, { ip: '192.0.2.1' });

      expect(repository.create).toHaveBeenCalledWith(
        expect.objectContaining({ lastUsedAt: NOW, expiresAt: later(30 * DAY), endsAt: later(90 * DAY) }),
      );
      expect(tokens.refreshTokenExpiresAt).toBe(later(30 * DAY).toISOString());
      expect(repository.deleteExpired).toHaveBeenCalledWith(expect.any(Number), NOW);
    });

    it('should not let the first refresh token outlive a session shorter than the idle time', async () => {
      test = await newTestService(ConsoleSessions, { auth: { ...test.config.auth, sessionMaxMs: 7 * DAY } });
      test.mock(SessionClock).now.mockReturnValue(NOW);
      test
        .mock(ConsoleSessionsRepository)
        .create.mockImplementation((values) => Promise.resolve({ ...values, id: SESSION } as never));
      test.mock(ConsoleSessionsRepository).deleteExpired.mockResolvedValue();
      test.mock(JwtService).signAsync.mockResolvedValue('signed');

      const tokens = await test.sut.open(ACCOUNT, { ip: '192.0.2.1' });

      expect(tokens.refreshTokenExpiresAt).toBe(later(7 * DAY).toISOString());
    });
  });

  describe('refresh', () => {
    const rotation = (rotatedAt: Date) => ({ id: SESSION, accountId: ACCOUNT, rotatedAt, expiresAt: later(30 * DAY) });

    it("should rotate by the hash of the presented token at the clock's time and answer a new one", async () => {
      const presented = newRefreshToken();
      repository.rotate.mockResolvedValue(rotation(NOW));

      const tokens = await sut.refresh(presented);

      expect(repository.rotate).toHaveBeenCalledWith(
        refreshTokenHash(presented),
        refreshTokenHash(tokens.refreshToken),
        later(30 * DAY),
        NOW,
      );
      expect(tokens.refreshToken).not.toBe(presented);
      expect(tokens.refreshToken).toMatch(/^gwrt_[A-Za-z0-9_-]{43}$/);
      expect(jwt.signAsync).toHaveBeenCalledWith(
        { sub: ACCOUNT, sid: SESSION, iat: Math.floor(NOW.getTime() / 1000) },
        { expiresIn: test.config.auth.accessTokenTtlSeconds },
      );
      expect(tokens.refreshTokenExpiresAt).toBe(later(30 * DAY).toISOString());
      expect(repository.findReplay).not.toHaveBeenCalled();
      expect(repository.revokeByRetiredHash).not.toHaveBeenCalled();
    });

    it('should answer the same token again within the grace the very pair its first trade did', async () => {
      const presented = newRefreshToken();
      repository.rotate.mockResolvedValueOnce(rotation(NOW));
      const first = await sut.refresh(presented);

      clock.now.mockReturnValue(later(9_000));
      repository.rotate.mockResolvedValueOnce(null);
      repository.findReplay.mockResolvedValue(rotation(NOW));
      const second = await sut.refresh(presented);

      expect(second).toEqual(first);
      expect(repository.findReplay).toHaveBeenCalledWith(
        refreshTokenHash(presented),
        refreshTokenHash(first.refreshToken),
        later(9_000 - test.config.auth.refreshGraceMs),
        later(9_000),
      );
      expect(repository.revokeByRetiredHash).not.toHaveBeenCalled();
    });

    it('should trade two different tokens for two different ones', async () => {
      repository.rotate.mockResolvedValue(rotation(NOW));
      const first = await sut.refresh(newRefreshToken());
      const second = await sut.refresh(newRefreshToken());
      expect(second.refreshToken).not.toBe(first.refreshToken);
    });

    it('should refuse a token of the wrong shape without a query', async () => {
      await expectInvalidSession(sut.refresh('eyJhbGciOiJIUzI1NiJ9.e30.sig'));
      expect(repository.rotate).not.toHaveBeenCalled();
    });

    it('should revoke the session of a replaced token that comes back past the grace, and log the session, never the token', async () => {
      const presented = newRefreshToken();
      repository.rotate.mockResolvedValue(null);
      repository.findReplay.mockResolvedValue(null);
      repository.revokeByRetiredHash.mockResolvedValue(SESSION);

      await expectInvalidSession(sut.refresh(presented));

      expect(repository.revokeByRetiredHash).toHaveBeenCalledWith(refreshTokenHash(presented));
      expect(test.logger.warn).toHaveBeenCalledWith({ sessionId: SESSION }, expect.any(String));
      expect(JSON.stringify(test.logger.warn.mock.calls)).not.toContain(presented);
    });

    it('should answer 401 quietly to a token that was never issued', async () => {
      repository.rotate.mockResolvedValue(null);
      repository.findReplay.mockResolvedValue(null);
      repository.revokeByRetiredHash.mockResolvedValue(null);
      await expectInvalidSession(sut.refresh(newRefreshToken()));
      expect(test.logger.warn).not.toHaveBeenCalled();
    });
  });

  describe('authenticate', () => {
    it('should answer the account and session of a token whose session is live', async () => {
      jwt.verifyAsync.mockResolvedValue({ sub: ACCOUNT, sid: SESSION });
      repository.findLiveAccount.mockResolvedValue(ACCOUNT);
      expect(await sut.authenticate('token')).toEqual({ accountId: ACCOUNT, sessionId: SESSION });
      expect(repository.findLiveAccount).toHaveBeenCalledWith(SESSION, NOW);
    });

    it('should refuse a token whose session is revoked or expired', async () => {
      jwt.verifyAsync.mockResolvedValue({ sub: ACCOUNT, sid: SESSION });
      repository.findLiveAccount.mockResolvedValue(null);
      await expectInvalidSession(sut.authenticate('token'));
    });

    it("should refuse a token that claims another account than its session's", async () => {
      jwt.verifyAsync.mockResolvedValue({ sub: 'someone-else', sid: SESSION });
      repository.findLiveAccount.mockResolvedValue(ACCOUNT);
      await expectInvalidSession(sut.authenticate('token'));
    });

    it('should refuse a token that does not verify, without a query', async () => {
      jwt.verifyAsync.mockRejectedValue(new Error('jwt expired'));
      await expectInvalidSession(sut.authenticate('token'));
      expect(repository.findLiveAccount).not.toHaveBeenCalled();
    });
  });

  describe('revokeAll', () => {
    it('should revoke every session but the one named in except', async () => {
      repository.revokeAll.mockResolvedValue(3);
      expect(await sut.revokeAll(ACCOUNT, { except: SESSION })).toBe(3);
      expect(repository.revokeAll).toHaveBeenCalledWith(ACCOUNT, SESSION, undefined);
    });

    it('should revoke every session without except', async () => {
      repository.revokeAll.mockResolvedValue(2);
      await sut.revokeAll(ACCOUNT);
      expect(repository.revokeAll).toHaveBeenCalledWith(ACCOUNT, null, undefined);
    });
  });
});
