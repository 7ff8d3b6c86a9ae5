import { JwtService } from '@nestjs/jwt';
import { ApiError } from 'src/common/errors/api-error';
import { ConsoleSessionsRepository } from 'src/modules/auth/console-sessions.repository';
import { ConsoleSessions } from 'src/modules/auth/console-sessions.service';
import { newRefreshToken, refreshTokenHash } from 'src/modules/auth/session-tokens';
import { newTestService, TestService } from 'test/support/test-service';

const ACCOUNT = '0b6f5c1e-2d3a-4b5c-8d9e-0f1a2b3c4d5e';
const SESSION = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

describe(ConsoleSessions.name, () => {
  let test: TestService<ConsoleSessions>;
  let sut: ConsoleSessions;
  let repository: jest.Mocked<ConsoleSessionsRepository>;
  let jwt: jest.Mocked<JwtService>;

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
    jwt.signAsync.mockResolvedValue('signed.access.token');
    repository.deleteExpired.mockResolvedValue();
  });

  describe('refresh', () => {
    it('should rotate by the hash of the presented token and answer a new one', async () => {
      const presented = newRefreshToken();
      repository.rotate.mockResolvedValue({ id: SESSION, accountId: ACCOUNT });

      const tokens = await sut.refresh(presented);

      const [oldHash, newHash] = repository.rotate.mock.calls[0];
      expect(oldHash).toBe(refreshTokenHash(presented));
      expect(tokens.refreshToken).not.toBe(presented);
      expect(newHash).toBe(refreshTokenHash(tokens.refreshToken));
      expect(jwt.signAsync).toHaveBeenCalledWith(expect.objectContaining({ sub: ACCOUNT, sid: SESSION }), {
        expiresIn: test.config.auth.accessTokenTtlSeconds,
      });
      expect(repository.revokeByRetiredHash).not.toHaveBeenCalled();
    });

    it('should refuse a token of the wrong shape without a query', async () => {
      await expectInvalidSession(sut.refresh('eyJhbGciOiJIUzI1NiJ9.e30.sig'));
      expect(repository.rotate).not.toHaveBeenCalled();
    });

    it('should revoke the session of a replaced token that comes back, and log the session, never the token', async () => {
      const presented = newRefreshToken();
      repository.rotate.mockResolvedValue(null);
      repository.revokeByRetiredHash.mockResolvedValue(SESSION);

      await expectInvalidSession(sut.refresh(presented));

      expect(repository.revokeByRetiredHash).toHaveBeenCalledWith(refreshTokenHash(presented));
      expect(test.logger.warn).toHaveBeenCalledWith({ sessionId: SESSION }, expect.any(String));
      expect(JSON.stringify(test.logger.warn.mock.calls)).not.toContain(presented);
    });

    it('should answer 401 quietly to a token that was never issued', async () => {
      repository.rotate.mockResolvedValue(null);
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
