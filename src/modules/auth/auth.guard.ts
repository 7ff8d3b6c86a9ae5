import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AUTH_KIND, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { presentedAuthorization } from 'src/common/http/wire-format';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ConsoleIdentity, ConsoleSessions } from 'src/modules/auth/console-sessions.service';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** The one global guard: each route declares how it authenticates (auth.decorators.ts); undeclared routes are closed. */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly adminTokenDigest: Buffer | null;

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly sessions: ConsoleSessions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminTokenDigest = config.adminToken ? sha256(config.adminToken) : null;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.getAllAndOverride<AuthKind | undefined>(AUTH_KIND, [
      context.getHandler(),
      context.getClass(),
    ]);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const authorization = request.headers.authorization;
    switch (kind) {
      case AuthKind.Public:
        return true;
      case AuthKind.ApiKey:
        // /v1 keys are checked before the body is read (registerEdgeHooks); only another path looks it up here.
        if (request.principal?.kind !== AuthKind.ApiKey) {
          request.principal = await this.apiKeys.authenticate(presentedAuthorization(request));
        }
        return true;
      case AuthKind.Console:
        request.principal = { kind: AuthKind.Console, ...(await this.consoleSession(authorization)) };
        return true;
      case AuthKind.Admin:
        this.checkAdmin(authorization);
        request.principal = { kind: AuthKind.Admin };
        return true;
      case undefined:
        throw new ApiError(ErrorKind.NotFound, 'Unknown path. See /docs for the API.');
    }
  }

  private async consoleSession(authorization: string | undefined): Promise<ConsoleIdentity> {
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
    if (!token) {
      throw new ApiError(
        ErrorKind.InvalidSession,
        'Missing console session. Send "Authorization: Bearer <accessToken>".',
      );
    }
    return this.sessions.authenticate(token);
  }

  /** Compares digests in constant time, so response timing reveals nothing about the token. */
  private checkAdmin(authorization: string | undefined): void {
    const presented = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
    if (!this.adminTokenDigest || !timingSafeEqual(sha256(presented), this.adminTokenDigest)) {
      throw new ApiError(ErrorKind.InvalidAdminToken, 'Invalid or missing admin token.');
    }
  }
}
