import { createHash, timingSafeEqual } from 'node:crypto';
import { AdminPrincipal, AuthKind } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { AdminToken, AdminRole } from 'src/config/admin-tokens';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * Who an admin `Authorization` header names: compared as digests in constant time against every
 * configured token, so neither the match nor its position leaks through timing. Used by the auth
 * guard, and by the edge hooks for the one admin route with a large body, before it is read.
 */
export class AdminTokenMatcher {
  private readonly digests: { name: string; role: AdminRole; digest: Buffer }[];

  constructor(tokens: AdminToken[]) {
    this.digests = tokens.map(({ name, role, token }) => ({ name, role, digest: sha256(token) }));
  }

  /** The token's principal; 401 invalid_admin_token when it is no configured token. */
  principalOf(authorization: string | undefined): AdminPrincipal {
    const presented = sha256(authorization?.startsWith('Bearer ') ? authorization.slice(7) : '');
    let principal: AdminPrincipal | null = null;
    for (const token of this.digests) {
      if (timingSafeEqual(presented, token.digest)) {
        principal = { kind: AuthKind.Admin, name: token.name, role: token.role };
      }
    }
    if (principal === null) {
      throw new ApiError(ErrorKind.InvalidAdminToken, 'Invalid or missing admin token.');
    }
    return principal;
  }
}
