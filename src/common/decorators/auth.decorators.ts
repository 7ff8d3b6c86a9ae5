import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { AuthenticatedRequest, AuthKind, Principal } from 'src/common/http/principal';
import { AdminAuditInterceptor } from 'src/common/interceptors/admin-audit.interceptor';

export { AuthKind } from 'src/common/http/principal';
export type {
  AdminPrincipal,
  ApiKeyPrincipal,
  AuthenticatedRequest,
  ConsolePrincipal,
  Principal,
} from 'src/common/http/principal';

export const AUTH_KIND = 'gateway:auth-kind';

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
