import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ADMIN_PERMISSION, AdminPermission, checkAdminPermission } from 'src/common/decorators/admin-permissions';
import { AUTH_KIND, AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { presentedAuthorization } from 'src/common/http/wire-format';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { AdminTokenMatcher } from 'src/modules/auth/admin-token-matcher';
import { ConsoleIdentity, ConsoleSessions } from 'src/modules/auth/console-sessions.service';

/** The one global guard: each route declares how it authenticates (auth.decorators.ts); undeclared routes are closed. */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly adminTokens: AdminTokenMatcher;

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly sessions: ConsoleSessions,
    private readonly accounts: AccountsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminTokens = new AdminTokenMatcher(config.adminTokens);
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
        await this.refuseWritesWhileSuspended(request.method, request.url, request.principal.accountId);
        return true;
      case AuthKind.Admin:
        request.principal = this.adminTokens.principalOf(authorization);
        checkAdminPermission(
          request.principal.role,
          this.reflector.getAllAndOverride<AdminPermission | undefined>(ADMIN_PERMISSION, [
            context.getHandler(),
            context.getClass(),
          ]),
        );
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

  /**
   * A suspended account's console is read-only: reads answer, every change (keys, top-ups,
   * redemptions, settings) is refused. Sessions themselves (/console/auth) still work, so the
   * owner can sign in and read why their keys are refused. One indexed read, on writes only.
   */
  private async refuseWritesWhileSuspended(method: string, url: string, accountId: string): Promise<void> {
    if (method === 'GET' || method === 'HEAD' || url.startsWith('/console/auth/')) {
      return;
    }
    if (await this.accounts.isSuspended(accountId)) {
      throw new ApiError(
        ErrorKind.AccountSuspended,
        'This account is suspended: the console is read-only. Contact support.',
      );
    }
  }

  /**
   * Who presented the token: its name and role. Compares digests in constant time, and with every token
   * whatever matched, so response timing reveals nothing about any of them.
   */
}
