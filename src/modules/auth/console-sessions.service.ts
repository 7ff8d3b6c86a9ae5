import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ConsoleSessionsRepository, RotatedSession } from 'src/modules/auth/console-sessions.repository';
import { ConsoleSessionDto, SessionTokensDto } from 'src/modules/auth/dto/session.dto';
import {
  AccessClaims,
  accessClaimsOf,
  isRefreshTokenShaped,
  newRefreshToken,
  refreshTokenHash,
  sessionUserAgent,
  successorKey,
  successorRefreshToken,
} from 'src/modules/auth/session-tokens';
import { SessionClock } from 'src/modules/auth/session-clock';
import { EntityManager } from 'typeorm';

/** Who logs in: the client address as the HTTP server resolved it, and the user agent it sent. */
export interface SessionClient {
  ip: string;
  userAgent?: string;
}

/** The console principal's identity: the account and the session its access token belongs to. */
export interface ConsoleIdentity {
  accountId: string;
  sessionId: string;
}

/** Expired sessions a login deletes on its way, so the table never grows with dead rows for long. */
const CLEANUP_BATCH = 100;

const invalidSession = () =>
  new ApiError(ErrorKind.InvalidSession, 'Invalid or expired console session. Log in again.');

/**
 * Console sessions: a short access token (a JWT naming its session) and a single-use refresh token
 * stored hashed. A session revoked (logout, log out everywhere, a password change, a reused refresh
 * token) ends its access tokens at once: the auth guard checks the session on every console request.
 * Whatever its refreshes, a session ends CONSOLE_SESSION_MAX_DAYS after its login.
 */
@Injectable()
export class ConsoleSessions {
  private readonly successorKey: Buffer;

  constructor(
    private readonly sessions: ConsoleSessionsRepository,
    private readonly jwt: JwtService,
    private readonly clock: SessionClock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.successorKey = successorKey(config.jwtSecret);
  }

  /** Starts a session for an account that just proved who it is (login, registration). */
  async open(accountId: string, client: SessionClient): Promise<SessionTokensDto> {
    const now = this.clock.now();
    void this.sessions.deleteExpired(CLEANUP_BATCH, now).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'console session cleanup failed');
    });
    const refreshToken = newRefreshToken();
    const endsAt = new Date(now.getTime() + this.config.auth.sessionMaxMs);
    const refreshExpiry = this.refreshExpiry(now);
    const session = await this.sessions.create({
      accountId,
      refreshHash: refreshTokenHash(refreshToken),
      lastUsedAt: now,
      expiresAt: refreshExpiry < endsAt ? refreshExpiry : endsAt,
      endsAt,
      userAgent: sessionUserAgent(client.userAgent),
      clientAddress: client.ip || null,
    });
    return this.tokens({ sub: accountId, sid: session.id }, now, refreshToken, session.expiresAt);
  }

  /**
   * Trades a refresh token for the next pair; the one presented stops working. The same token again
   * within CONSOLE_REFRESH_GRACE_SECONDS of the trade, while the session still holds what it was
   * traded for, is a racing tab: it gets that same pair. Any other token already traded can only
   * come back from a copy, so its whole session is revoked as stolen.
   */
  async refresh(refreshToken: string): Promise<SessionTokensDto> {
    if (!isRefreshTokenShaped(refreshToken)) {
      throw invalidSession();
    }
    const now = this.clock.now();
    const presented = refreshTokenHash(refreshToken);
    const next = successorRefreshToken(refreshToken, this.successorKey);
    const nextHash = refreshTokenHash(next);
    const rotated =
      (await this.sessions.rotate(presented, nextHash, this.refreshExpiry(now), now)) ??
      (await this.sessions.findReplay(presented, nextHash, this.graceStart(now), now));
    if (rotated) {
      return this.rotatedTokens(rotated, next);
    }
    const revoked = await this.sessions.revokeByRetiredHash(presented);
    if (revoked) {
      this.logger.warn({ sessionId: revoked }, 'console refresh token reused past its grace: session revoked');
    }
    throw invalidSession();
  }

  /** The identity of a console access token whose session is live; 401 invalid_session otherwise. */
  async authenticate(accessToken: string): Promise<ConsoleIdentity> {
    const claims = accessClaimsOf(await this.jwt.verifyAsync<object>(accessToken).catch(() => null));
    const accountId = claims ? await this.sessions.findLiveAccount(claims.sid, this.clock.now()) : null;
    if (!claims || accountId !== claims.sub) {
      throw invalidSession();
    }
    return { accountId, sessionId: claims.sid };
  }

  /** Logs one session out. Revoking one that is already gone is not an error: the outcome is the same. */
  async revoke(identity: ConsoleIdentity): Promise<void> {
    await this.sessions.revoke(identity.accountId, identity.sessionId);
  }

  /** Ends one of the account's sessions, picked from the session list; 404 when none of its live ones has the id. */
  async revokeOne(accountId: string, sessionId: string): Promise<void> {
    if (!(await this.sessions.revoke(accountId, sessionId))) {
      throw new ApiError(ErrorKind.NotFound, `No live session '${sessionId}'.`, 'sessionId');
    }
  }

  /**
   * Revokes every live session of the account ("log out everywhere"), or every one but `except`
   * (a password change keeps the session that made it). Within `manager`'s transaction when given.
   * Resolves to how many it revoked.
   */
  revokeAll(accountId: string, options: { except?: string; manager?: EntityManager } = {}): Promise<number> {
    return this.sessions.revokeAll(accountId, options.except ?? null, options.manager);
  }

  async list(identity: ConsoleIdentity): Promise<ConsoleSessionDto[]> {
    const sessions = await this.sessions.listLive(identity.accountId, this.clock.now());
    return sessions.map((session) => ({
      id: session.id,
      createdAt: session.createdAt.toISOString(),
      lastUsedAt: session.lastUsedAt.toISOString(),
      expiresAt: session.expiresAt.toISOString(),
      userAgent: session.userAgent,
      clientAddress: session.clientAddress,
      current: session.id === identity.sessionId,
    }));
  }

  private refreshExpiry(now: Date): Date {
    return new Date(now.getTime() + this.config.auth.refreshTokenTtlMs);
  }

  /** Tokens retired after this may still be answered again. */
  private graceStart(now: Date): Date {
    return new Date(now.getTime() - this.config.auth.refreshGraceMs);
  }

  /** The pair of a rotation, the same each time it is asked for: everything in it comes from the rotation. */
  private rotatedTokens(rotated: RotatedSession, refreshToken: string): Promise<SessionTokensDto> {
    const claims = { sub: rotated.accountId, sid: rotated.id };
    return this.tokens(claims, rotated.rotatedAt, refreshToken, rotated.expiresAt);
  }

  private async tokens(
    claims: AccessClaims,
    issued: Date,
    refreshToken: string,
    refreshExpiresAt: Date,
  ): Promise<SessionTokensDto> {
    const ttl = this.config.auth.accessTokenTtlSeconds;
    const issuedAt = Math.floor(issued.getTime() / 1000);
    const accessToken = await this.jwt.signAsync({ ...claims, iat: issuedAt }, { expiresIn: ttl });
    return {
      accessToken,
      expiresIn: ttl,
      accessTokenExpiresAt: new Date((issuedAt + ttl) * 1000).toISOString(),
      refreshToken,
      refreshTokenExpiresAt: refreshExpiresAt.toISOString(),
    };
  }
}
