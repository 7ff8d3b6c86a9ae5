import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { AdminRole } from 'src/config/admin-tokens';

/**
 * What an admin route needs. `read`: every GET. `catalog:write`: channels, models, price books,
 * channel tests. `access:write`: who may call what (account suspension, rate limits, customer keys).
 * `codes:write`: redemption codes. `money:write`: balances and top-ups (adjustments, rechecks,
 * payment settings).
 */
export const ADMIN_PERMISSIONS = ['read', 'catalog:write', 'access:write', 'codes:write', 'money:write'] as const;
export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number];

/** The one table of who may do what (docs/operators.md, "Admin roles"). */
export const ROLE_PERMISSIONS: Record<AdminRole, ReadonlySet<AdminPermission>> = {
  admin: new Set(ADMIN_PERMISSIONS),
  operator: new Set(['read', 'catalog:write', 'access:write', 'codes:write']),
  finance: new Set(['read', 'money:write']),
  read: new Set(['read']),
};

export const ADMIN_PERMISSION = 'gateway:admin-permission';

const rolesWith = (permission: AdminPermission) =>
  Object.entries(ROLE_PERMISSIONS)
    .filter(([, permissions]) => permissions.has(permission))
    .map(([role]) => `\`${role}\``)
    .join(', ');

/**
 * Declares what an admin route needs, one line above its handler: `@Permission('money:write')`.
 * A route without one is served to `admin` tokens only, and the roles e2e test fails until it has one.
 * OpenAPI shows it as `x-admin-permission` and the 403 it answers to the other roles.
 */
export const Permission = (permission: AdminPermission) =>
  applyDecorators(
    SetMetadata(ADMIN_PERMISSION, permission),
    ApiExtension('x-admin-permission', permission),
    ApiForbiddenResponse({
      description: `\`admin_permission_required\`: needs \`${permission}\`, which only the roles ${rolesWith(permission)} have`,
    }),
  );

/**
 * Refuses an admin token whose role lacks what the route needs: 403 `admin_permission_required`,
 * the message naming the permission and the role. Undeclared routes (`undefined`) need `admin`.
 */
export function checkAdminPermission(role: AdminRole, needed: AdminPermission | undefined): void {
  if (role === 'admin' || (needed !== undefined && ROLE_PERMISSIONS[role].has(needed))) {
    return;
  }
  throw new ApiError(
    ErrorKind.AdminPermissionRequired,
    needed === undefined
      ? `This route declares no permission, so only an admin token may call it; this token's role is '${role}'.`
      : `This route needs the permission '${needed}', which this token's role '${role}' does not have.`,
  );
}
