import { randomBytes } from 'node:crypto';
import {
  ConfigError,
  DEFAULT_HOLD_SWEEP_AGE_MS,
  loadConfig,
  loadDatabaseConfig,
  loadRedisTarget,
} from 'src/config/app-config';

const secrets = () => ({
  JWT_SECRET: randomBytes(48).toString('base64'),
  SECRETS_KEY: randomBytes(32).toString('base64'),
});

describe('loadConfig', () => {
  it('should treat an unset NODE_ENV as production and refuse to start without the secrets', () => {
    expect(() => loadConfig({})).toThrow(ConfigError);
    expect(() => loadConfig({})).toThrow(/^Missing environment variable JWT_SECRET/);
    expect(() => loadConfig({ JWT_SECRET: secrets().JWT_SECRET })).toThrow(/SECRETS_KEY/);
    expect(() => loadConfig({ NODE_ENV: '' })).toThrow(/JWT_SECRET/);
  });

  it('should start in production mode when NODE_ENV is unset and the secrets are given', () => {
    const env = secrets();
    const config = loadConfig(env);
    expect(config.nodeEnv).toBe('production');
    expect(config.jwtSecret).toBe(env.JWT_SECRET);
    expect(config.secretsKey.equals(Buffer.from(env.SECRETS_KEY, 'base64'))).toBe(true);
    expect(config.adminToken).toBeNull();
  });

  it('should keep the development defaults only when development or test is asked for', () => {
    for (const nodeEnv of ['development', 'test']) {
      const config = loadConfig({ NODE_ENV: nodeEnv });
      expect(config.nodeEnv).toBe(nodeEnv);
      expect(config.jwtSecret.length).toBeGreaterThanOrEqual(32);
      expect(config.secretsKey).toHaveLength(32);
    }
  });

  it.each([
    ['an all-zero SECRETS_KEY', { SECRETS_KEY: 'A'.repeat(43) + '=' }, 'SECRETS_KEY'],
    ['the development SECRETS_KEY', { SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') }, 'SECRETS_KEY'],
    [
      'the development JWT_SECRET',
      { JWT_SECRET: 'development-only-jwt-secret-do-not-use-in-production' },
      'JWT_SECRET',
    ],
    ['the JWT_SECRET compose used to ship', { JWT_SECRET: 'change-me-jwt-secret-0123456789abcdef0123' }, 'JWT_SECRET'],
  ])('should refuse %s in production', (_case, override, variable) => {
    expect(() => loadConfig({ ...secrets(), ...override })).toThrow(
      new RegExp(`^Invalid environment variable ${variable}`),
    );
    expect(() => loadConfig({ ...secrets(), ...override, NODE_ENV: 'production' })).toThrow(ConfigError);
  });

  it('should serve /docs in production only when DOCS_ENABLED=true: the schema lists the admin routes', () => {
    expect(loadConfig(secrets()).docsEnabled).toBe(false);
    expect(loadConfig({ ...secrets(), DOCS_ENABLED: 'true' }).docsEnabled).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).docsEnabled).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', DOCS_ENABLED: 'false' }).docsEnabled).toBe(false);
    expect(() => loadConfig({ NODE_ENV: 'test', DOCS_ENABLED: 'yes' })).toThrow(/DOCS_ENABLED/);
  });

  it('should hash passwords at scrypt N = 2^15 unless told, and never below that in production', () => {
    expect(loadConfig(secrets()).auth.hashCost).toBe(15);
    expect(loadConfig({ ...secrets(), PASSWORD_HASH_COST: '17' }).auth.hashCost).toBe(17);
    expect(() => loadConfig({ ...secrets(), PASSWORD_HASH_COST: '14' })).toThrow(
      /^Invalid environment variable PASSWORD_HASH_COST: at least 15 in production/,
    );
    expect(loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '10' }).auth.hashCost).toBe(10);
    expect(() => loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '9' })).toThrow(/PASSWORD_HASH_COST/);
    expect(() => loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '18' })).toThrow(/PASSWORD_HASH_COST/);
  });

  it('should trust no proxy unless TRUST_PROXY lists addresses or ranges', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).trustedProxies).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'test', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,loopback,::1' }).trustedProxies).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'loopback',
      '::1',
    ]);
    for (const bad of ['true', '*', '0.0.0.0/0', '::/0', '10.0.0.0/33', 'proxy.internal', '2']) {
      expect(() => loadConfig({ NODE_ENV: 'test', TRUST_PROXY: bad })).toThrow(
        /^Invalid environment variable TRUST_PROXY/,
      );
    }
  });
});

describe('CORS origins', () => {
  const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }).cors;

  it('should allow no origin unless CONSOLE_ORIGINS or V1_CORS_ORIGINS lists some', () => {
    expect(load({})).toEqual({ consoleOrigins: [], v1Origins: [] });
    expect(
      load({ CONSOLE_ORIGINS: 'https://Console.example.com, http://localhost:5173', V1_CORS_ORIGINS: '*' }),
    ).toEqual({ consoleOrigins: ['https://console.example.com', 'http://localhost:5173'], v1Origins: '*' });
  });

  it.each([
    ['CONSOLE_ORIGINS', '*'],
    ['CONSOLE_ORIGINS', 'console.example.com'],
    ['CONSOLE_ORIGINS', 'https://console.example.com/'],
    ['CONSOLE_ORIGINS', 'https://console.example.com/app'],
    ['CONSOLE_ORIGINS', 'ftp://console.example.com'],
    ['V1_CORS_ORIGINS', '*, https://app.example.com'],
    ['V1_CORS_ORIGINS', 'null'],
  ])('should refuse %s=%p naming the variable', (variable, value) => {
    expect(() => load({ [variable]: value })).toThrow(new RegExp(`^Invalid environment variable ${variable}`));
  });
});

describe('loadConfig: Redis', () => {
  it('should connect to a Redis Cluster named by REDIS_URL or by REDIS_CLUSTER_NODES, which wins', () => {
    const byUrl = loadConfig({ NODE_ENV: 'test', REDIS_URL: 'redis-cluster://:pw@10.0.0.1:7000,10.0.0.2:7000' });
    expect(byUrl.redis).toMatchObject({
      kind: 'cluster',
      password: 'pw',
      nodes: [{ host: '10.0.0.1' }, { host: '10.0.0.2' }],
    });
    const byNodes = loadRedisTarget({ REDIS_URL: 'redis://127.0.0.1:6379/2', REDIS_CLUSTER_NODES: '10.0.0.3:7000' });
    expect(byNodes).toMatchObject({ kind: 'cluster', nodes: [{ host: '10.0.0.3', port: 7000 }] });
  });

  it('should refuse at startup a REDIS_URL that is neither one Redis nor a cluster', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', REDIS_URL: 'http://cache:6379' })).toThrow(
      /^Invalid environment variable REDIS_URL: must be a redis:\/\/ \(or rediss:\/\/\) URL, or redis-cluster:\/\//,
    );
    expect(() => loadConfig({ NODE_ENV: 'test', REDIS_CLUSTER_NODES: 'cache' })).toThrow(
      /^Invalid environment variable REDIS_CLUSTER_NODES: 'cache' is not host:port/,
    );
  });
});

describe('loadConfig: console sessions', () => {
  const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env });

  it('should end a session after 90 days and give a traded refresh token 10 seconds of grace by default', () => {
    expect(load({}).auth).toMatchObject({ sessionMaxMs: 90 * 86_400_000, refreshGraceMs: 10_000 });
    expect(load({ CONSOLE_SESSION_MAX_DAYS: '7', CONSOLE_REFRESH_GRACE_SECONDS: '0' }).auth).toMatchObject({
      sessionMaxMs: 7 * 86_400_000,
      refreshGraceMs: 0,
    });
  });

  it.each([
    ['CONSOLE_SESSION_MAX_DAYS', '0'],
    ['CONSOLE_SESSION_MAX_DAYS', 'forever'],
    ['CONSOLE_REFRESH_GRACE_SECONDS', '-1'],
    ['CONSOLE_REFRESH_GRACE_SECONDS', '301'],
  ])('should refuse %s=%s at startup', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('loadDatabaseConfig', () => {
  it('should let migrations run without the API secrets', () => {
    expect(loadDatabaseConfig({ DATABASE_URL: 'postgres://db/gateway', DATABASE_POOL_MAX: '5' })).toEqual({
      databaseUrl: 'postgres://db/gateway',
      database: { poolMax: 5, statementTimeoutMs: 30_000, connectTimeoutMs: 10_000, idleTimeoutMs: 10_000 },
    });
    expect(() => loadDatabaseConfig({ DATABASE_URL: 'mysql://db' })).toThrow(
      /^Invalid environment variable DATABASE_URL/,
    );
  });
});

describe('loadConfig: MAX_REQUEST_MS', () => {
  it("should default the channel timeouts and the breaker to the issue's values", () => {
    const config = loadConfig({ NODE_ENV: 'test' });
    expect(config.upstream).toEqual({
      connectTimeoutMs: 5_000,
      headersTimeoutMs: 300_000,
      streamHeadersTimeoutMs: 30_000,
      bodyTimeoutMs: 60_000,
    });
    expect(config.breaker).toEqual({ failures: 5, openMs: 30_000, maxOpenMs: 300_000 });
  });

  it('should refuse a breaker whose longest open time is below its first, or that never opens', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', BREAKER_OPEN_MS: '60000', BREAKER_MAX_OPEN_MS: '1000' })).toThrow(
      /^Invalid environment variable BREAKER_MAX_OPEN_MS/,
    );
    expect(() => loadConfig({ NODE_ENV: 'test', BREAKER_FAILURES: '0' })).toThrow(/BREAKER_FAILURES/);
  });

  it('should default MAX_REQUEST_MS to 10 minutes, below the hold sweeper age', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).relay.maxRequestMs).toBe(600_000);
    expect(DEFAULT_HOLD_SWEEP_AGE_MS).toBeGreaterThan(600_000);
  });

  it('should refuse a MAX_REQUEST_MS at or above the hold sweeper age', () => {
    const age = DEFAULT_HOLD_SWEEP_AGE_MS;
    expect(() => loadConfig({ NODE_ENV: 'test', MAX_REQUEST_MS: String(age) })).toThrow(
      new ConfigError(`Invalid environment variable MAX_REQUEST_MS: must be below HOLD_SWEEP_AGE_MS (${age} ms)`),
    );
    expect(() => loadConfig({ NODE_ENV: 'test', MAX_REQUEST_MS: '300000', HOLD_SWEEP_AGE_MS: '300000' })).toThrow(
      /MAX_REQUEST_MS/,
    );
    expect(loadConfig({ NODE_ENV: 'test', MAX_REQUEST_MS: String(age - 1) }).relay.maxRequestMs).toBe(age - 1);
  });

  it('should keep the default deadline below a shortened sweeper age', () => {
    expect(loadConfig({ NODE_ENV: 'test', HOLD_SWEEP_AGE_MS: '240000' }).relay.maxRequestMs).toBe(120_000);
  });
});
