import { testDatabaseName, withDatabase } from 'test/support/test-database';

describe(testDatabaseName.name, () => {
  it('should give the name of a database meant for tests', () => {
    expect(testDatabaseName('postgres://postgres@127.0.0.1:5432/gateway_test_1_2')).toBe('gateway_test_1_2');
    expect(testDatabaseName('postgresql://u:p@db.internal/test?sslmode=require')).toBe('test');
  });

  it.each([
    ['the development database', 'postgres://postgres@127.0.0.1:5432/gateway', '"gateway"'],
    ['the maintenance database', 'postgres://postgres@127.0.0.1:5432/postgres', '"postgres"'],
    ['a URL without a database', 'postgres://127.0.0.1:5432', '""'],
    ['"test" only in the host', 'postgres://test-db.internal:5432/gateway', '"gateway"'],
    ['"test" only in the options', 'postgres://127.0.0.1/gateway?application_name=test', '"gateway"'],
  ])('should refuse %s', (_label, url, shown) => {
    expect(() => testDatabaseName(url)).toThrow(
      `refusing to run tests against the database ${shown} of DATABASE_URL: only a database whose name contains "test" may be used`,
    );
  });

  it('should refuse an unset or unreadable URL, naming the variable', () => {
    expect(() => testDatabaseName(undefined)).toThrow(
      'refusing to run tests: DATABASE_URL is not a database URL (unset)',
    );
    expect(() => testDatabaseName('gateway_test', 'TEST_URL')).toThrow(
      'refusing to run tests: TEST_URL is not a database URL (unreadable)',
    );
  });
});

describe(withDatabase.name, () => {
  it('should replace only the database, keeping credentials, host and options', () => {
    expect(withDatabase('postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable', 'gateway_test_1')).toBe(
      'postgres://u:p@127.0.0.1:5432/gateway_test_1?sslmode=disable',
    );
    expect(withDatabase('postgres://127.0.0.1:5432', 'gateway_test_1')).toBe(
      'postgres://127.0.0.1:5432/gateway_test_1',
    );
  });
});
