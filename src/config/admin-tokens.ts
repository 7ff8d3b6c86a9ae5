import { ConfigError } from 'src/config/config-error';
import { splitList } from 'src/config/trusted-proxies';

/**
 * What an admin token may do (docs/operators.md, "Admin roles"): `admin` everything; `operator` the
 * catalog, accounts' access (keys, suspension, rate limits) and redemption codes, never money;
 * `finance` money (top-ups, adjustments, payment settings), never the catalog; `read` GET only.
 */
export const ADMIN_ROLES = ['admin', 'operator', 'finance', 'read'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

/** One bearer token of `/admin`, the name the audit log records for whoever presents it, and its role. */
export interface AdminToken {
  name: string;
  role: AdminRole;
  token: string;
}

/** `ADMIN_TOKEN` alone keeps working: it is one `admin` token under this name. */
export const DEFAULT_ADMIN_TOKEN_NAME = 'default';
const NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,31}$/;
const MIN_TOKEN_LENGTH = 16;

const invalid = (reason: string) => new ConfigError(`Invalid environment variable ADMIN_TOKENS: ${reason}`);
const isRole = (role: string): role is AdminRole => (ADMIN_ROLES as readonly string[]).includes(role);

/**
 * `ADMIN_TOKENS=ops@operator:<token>,books@finance:<token>,ci:<token>`: a name (lower-case letters,
 * digits, `_.-`, at most 32), optionally `@` and a role, then a colon and the token (at least 16
 * characters, no comma), split at the first colon. Without a role a token is `admin`, so lists
 * written before roles existed keep their meaning; `@` cannot occur in a name, so it is unambiguous.
 * Names and tokens must be unique, `ADMIN_TOKEN` included (named `default`, role `admin`), so every
 * request has exactly one actor.
 */
export function adminTokensOf(adminToken: string | undefined, adminTokens: string | undefined): AdminToken[] {
  const tokens: AdminToken[] = adminToken ? [{ name: DEFAULT_ADMIN_TOKEN_NAME, role: 'admin', token: adminToken }] : [];
  for (const entry of splitList(adminTokens ?? '')) {
    const colon = entry.indexOf(':');
    const label = colon < 0 ? '' : entry.slice(0, colon);
    const token = colon < 0 ? '' : entry.slice(colon + 1);
    const at = label.indexOf('@');
    const name = at < 0 ? label : label.slice(0, at);
    const role = at < 0 ? 'admin' : label.slice(at + 1);
    if (!NAME_PATTERN.test(name)) {
      throw invalid(
        'each entry is name:token or name@role:token, the name 1-32 lower-case letters, digits, "_", "." or "-"',
      );
    }
    if (!isRole(role)) {
      throw invalid(`the role of '${name}' must be one of ${ADMIN_ROLES.join(', ')}`);
    }
    if (token.length < MIN_TOKEN_LENGTH) {
      throw invalid(`the token of '${name}' must be at least ${MIN_TOKEN_LENGTH} characters`);
    }
    if (tokens.some((known) => known.name === name)) {
      throw invalid(`the name '${name}' is given twice (ADMIN_TOKEN is named '${DEFAULT_ADMIN_TOKEN_NAME}')`);
    }
    if (tokens.some((known) => known.token === token)) {
      throw invalid(`the token of '${name}' is also another operator's token`);
    }
    tokens.push({ name, role, token });
  }
  return tokens;
}
