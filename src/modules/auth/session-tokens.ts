import { createHash, createHmac, randomBytes } from 'node:crypto';

/** Marks the token as ours for secret scanners; the 32 random bytes after it are the secret. */
const REFRESH_TOKEN_PREFIX = 'gwrt_';
const REFRESH_TOKEN = /^gwrt_[A-Za-z0-9_-]{43}$/;
const MAX_USER_AGENT = 256;

/** A new refresh token: 256 random bits, so it is stored as a plain SHA-256 (nothing to guess or stretch). */
export function newRefreshToken(): string {
  return REFRESH_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * The refresh token a refresh trades `presented` for: an HMAC of it under the deployment's key, so
 * that a second refresh with the same token (a racing tab, within the grace) gets the very same one
 * without the server ever keeping it readable. Without the key it is as unguessable as a random one.
 */
export function successorRefreshToken(presented: string, key: Buffer): string {
  return REFRESH_TOKEN_PREFIX + createHmac('sha256', key).update(presented).digest('base64url');
}

/** The key of successorRefreshToken, derived from the JWT secret so that it is used for nothing else. */
export function successorKey(jwtSecret: string): Buffer {
  return createHmac('sha256', jwtSecret).update('console refresh token successor').digest();
}

/** What the database keeps of a refresh token. */
export function refreshTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether `token` can be one of ours at all: anything else is refused without a query. */
export function isRefreshTokenShaped(token: string): boolean {
  return REFRESH_TOKEN.test(token);
}

/** The claims of a console access token: the account, and the session that must still be live. */
export interface AccessClaims {
  sub: string;
  sid: string;
}

/** Claims as verified by the JWT library, from a token that may predate sessions or be someone's experiment. */
export function accessClaimsOf(payload: unknown): AccessClaims | null {
  const { sub, sid } = (payload ?? {}) as Partial<Record<keyof AccessClaims, unknown>>;
  return typeof sub === 'string' && typeof sid === 'string' && UUID.test(sid) ? { sub, sid } : null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The user agent as kept for the session list: trimmed, cut, without control characters; null when empty. */
export function sessionUserAgent(raw: string | undefined): string | null {
  // eslint-disable-next-line no-control-regex
  const cleaned = (raw ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return cleaned ? cleaned.slice(0, MAX_USER_AGENT) : null;
}
