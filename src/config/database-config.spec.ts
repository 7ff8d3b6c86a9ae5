import { loadConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';

describe('the database pool (DATABASE_POOL_MAX, DATABASE_*_TIMEOUT_MS)', () => {
  const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env });

  it('should give each process 20 connections, a 30 s statement bound and 10 s connect and idle timeouts by default', () => {
    expect(load({}).database).toEqual({
      poolMax: 20,
      statementTimeoutMs: 30_000,
      connectTimeoutMs: 10_000,
      idleTimeoutMs: 10_000,
    });
  });

  it("should hand the values to node-postgres's pool, the statement bound as a startup parameter", () => {
    const config = load({
      DATABASE_POOL_MAX: '8',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      DATABASE_CONNECT_TIMEOUT_MS: '2500',
      DATABASE_IDLE_TIMEOUT_MS: '0',
    });
    expect(dataSourceOptions(config).extra).toEqual({
      max: 8,
      statement_timeout: 0,
      connectionTimeoutMillis: 2500,
      idleTimeoutMillis: 0,
    });
  });

  it.each([
    ['DATABASE_POOL_MAX', '0'],
    ['DATABASE_POOL_MAX', 'twenty'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '-1'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '0'],
    ['DATABASE_IDLE_TIMEOUT_MS', '1.5'],
  ])('should refuse %s=%s at startup', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(new RegExp(`^Invalid environment variable ${name}`));
  });
});
