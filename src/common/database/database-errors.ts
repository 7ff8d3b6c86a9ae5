/** Node's network errors: Postgres cannot be reached at all. */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * Postgres is unreachable or refuses work (connection exceptions, class 08; shutdown or not
 * accepting connections, 57P0x; too many connections, 53300), as opposed to one statement failing.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (NETWORK_ERRORS.has(code) || /^(08|57P0)/.test(code) || code === '53300')) {
    return true;
  }
  const message = (error as Error | null)?.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(message);
}
