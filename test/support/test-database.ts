/**
 * The name of the database `url` points the tests at, refusing any whose name lacks "test": a
 * DATABASE_URL left over from a shell, or a global setup that did not run, must never let a test
 * write to (or the teardown drop) a database that is not a throwaway one.
 */
export function testDatabaseName(url: string | undefined, variable = 'DATABASE_URL'): string {
  let name = '';
  try {
    name = decodeURIComponent(new URL(url ?? '').pathname.slice(1));
  } catch {
    throw new Error(
      `refusing to run tests: ${variable} is not a database URL (${url === undefined ? 'unset' : 'unreadable'})`,
    );
  }
  if (!name.includes('test')) {
    throw new Error(
      `refusing to run tests against the database "${name}" of ${variable}: only a database whose name contains "test" may be used`,
    );
  }
  return name;
}

/** `serverUrl` with its database replaced by `database` (credentials, host and options kept). */
export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}
