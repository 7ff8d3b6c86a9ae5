import { ConfigError } from 'src/config/config-error';
import { splitList } from 'src/config/trusted-proxies';

/** One bearer token of `/admin` and the name the audit log records for whoever presents it. */
export interface AdminToken {
  name: string;
  token: string;
}

/** `ADMIN_TOKEN` alone keeps working: it is one token under this name. */
export const DEFAULT_ADMIN_TOKEN_NAME = 'default';
const NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,31}$/;
const MIN_TOKEN_LENGTH = 16;

const invalid = (reason: string) => new ConfigError(`Invalid environment variable ADMIN_TOKENS: ${reason}`);

/**
 * `ADMIN_TOKENS=ops:<token>,finance:<token>`: a name (lower-case letters, digits, `_.-`, at most
 * 32) and its token (at least 16 characters, no comma), split at the first colon. Names and tokens
 * must be unique, `ADMIN_TOKEN` included (named `default`), so every request has exactly one actor.
 */
export function adminTokensOf(adminToken: string | undefined, adminTokens: string | undefined): AdminToken[] {
  const tokens: AdminToken[] = adminToken ? [{ name: DEFAULT_ADMIN_TOKEN_NAME, token: adminToken }] : [];
  for (const entry of splitList(adminTokens ?? '')) {
    const colon = entry.indexOf(':');
    const name = colon < 0 ? '' : entry.slice(0, colon);
    const token = colon < 0 ? '' : entry.slice(colon + 1);
    if (!NAME_PATTERN.test(name)) {
      throw invalid('each entry is name:token, the name 1-32 lower-case letters, digits, "_", "." or "-"');
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
    tokens.push({ name, token });
  }
  return tokens;
}
