import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { AdminAuditInterceptor } from 'src/common/interceptors/admin-audit.interceptor';

export enum AuthKind {
  Public = 'public',
  ApiKey = 'api-key',
  Console = 'console',
  Admin = 'admin',
}

export const AUTH_KIND = 'gateway:auth-kind';

export interface ApiKeyPrincipal {
  kind: AuthKind.ApiKey;
  accountId: string;
  keyId: string;
  /** The only models the key may use; null: every model. */
  allowedModels: ReadonlySet<string> | null;
  /** Nano-dollars the key may spend over its life (checked in the admission hold); null: no limit. */
  spendLimit: bigint | null;
}
export interface ConsolePrincipal {
  kind: AuthKind.Console;
  accountId: string;
  /** The console session the access token belongs to (live when the guard let the request in). */
  sessionId: string;
}
export interface AdminPrincipal {
  kind: AuthKind.Admin;
  /** The name of the token presented (ADMIN_TOKENS; ADMIN_TOKEN is `default`): the actor of the audit log. */
  name: string;
}
export type Principal = ApiKeyPrincipal | ConsolePrincipal | AdminPrincipal;

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

/** `/v1`: `Authorization: Bearer sk-…`. */
export const ApiKeyAuth = () => applyDecorators(SetMetadata(AUTH_KIND, AuthKind.ApiKey), ApiBearerAuth('apiKey'));
/** `/console`: `Authorization: Bearer <access token from /console/auth/login>`. */
export const ConsoleAuth = () => applyDecorators(SetMetadata(AUTH_KIND, AuthKind.Console), ApiBearerAuth('console'));
/** `/admin`: `Authorization: Bearer <ADMIN_TOKEN>`; every change through it is audited (AdminAuditInterceptor). */
export const AdminAuth = () =>
  applyDecorators(SetMetadata(AUTH_KIND, AuthKind.Admin), ApiSecurity('admin'), UseInterceptors(AdminAuditInterceptor));
/** No credentials needed (health, registration, login). */
export const PublicRoute = () => SetMetadata(AUTH_KIND, AuthKind.Public);

/** The principal the global AuthGuard attached to the request. */
export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.principal) {
    throw new Error('CurrentPrincipal used on a route without authentication');
  }
  return request.principal;
});
