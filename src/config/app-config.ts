import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AdminToken, adminTokensOf } from 'src/config/admin-tokens';
import { ConfigError } from 'src/config/config-error';
import { corsOriginsOf, CorsOrigins } from 'src/config/cors-origins';
import { DatabasePool, databasePoolOf } from 'src/config/database-config';
import { EnvDto } from 'src/config/env.dto';
import { MailConfig, mailConfigOf } from 'src/config/mail-config';
import { PaymentsConfig, paymentsConfigOf } from 'src/config/payments-config';
import { RedisTarget, redisTargetOf } from 'src/config/redis-config';
import { splitList } from 'src/config/trusted-proxies';
import { TracingConfig, tracingConfigOf } from 'src/config/tracing-config';

export type NodeEnv = 'development' | 'test' | 'production';

export interface AppConfig {
  nodeEnv: NodeEnv;
  port: number;
  databaseUrl: string;
  /** The connection pool's size and timeouts (DATABASE_POOL_MAX…; database-config.ts). */
  database: DatabasePool;
  /** One Redis or a Redis Cluster (REDIS_URL, REDIS_CLUSTER_NODES; redis-config.ts). */
  redis: RedisTarget;
  adminToken: string | null;
  /** Bearer token the API's /metrics requires; null: /metrics is open (keep it off the public network). */
  metricsToken: string | null;
  /** Every accepted `/admin` token with its operator's name (ADMIN_TOKEN is `default`); empty: /admin is closed. */
  adminTokens: AdminToken[];
  jwtSecret: string;
  /** 32-byte AES-256-GCM key for upstream API keys at rest. */
  secretsKey: Buffer;
  referralSharePercent: number;
  /** Proxies whose X-Forwarded-For is believed (Fastify's trustProxy); empty: the socket's address is the client. */
  trustedProxies: string[];
  /** Swagger UI at /docs and the schema at /docs-json (admin routes included): off in production unless DOCS_ENABLED=true. */
  docsEnabled: boolean;
  /**
   * Browser origins allowed to call the API (CORS): the console's (`/console`, credentials
   * allowed) and `/v1`'s ('*' allowed there: keys are sent explicitly, never as cookies). Empty: none.
   */
  cors: { consoleOrigins: CorsOrigins; v1Origins: CorsOrigins };
  /** Console sign-in throttles (fixed windows in Redis) and the per-process bound on password hashing. */
  auth: {
    attemptsPerIpPerMinute: number;
    failuresPerIpPerHour: number;
    failuresPerEmailPer15Min: number;
    hashConcurrency: number;
    hashQueue: number;
    /** log2 of scrypt's N for new hashes (a stored hash keeps the N it was made with). */
    hashCost: number;
    /** Console sessions: the access token's life, and the idle time after which the refresh token dies. */
    accessTokenTtlSeconds: number;
    refreshTokenTtlMs: number;
    /** A session's whole life from its login, refreshes or not. */
    sessionMaxMs: number;
    /** How long a traded refresh token still gets the pair it was traded for, rather than revoking its session. */
    refreshGraceMs: number;
  };
  logLevel: string;
  bodyLimitBytes: number;
  /**
   * Timeouts of a channel that sets none of its own (a channel's `timeouts` override each one):
   * connecting, the first byte of a non-streamed and of a streamed answer, and silence between chunks.
   */
  upstream: {
    connectTimeoutMs: number;
    headersTimeoutMs: number;
    streamHeadersTimeoutMs: number;
    bodyTimeoutMs: number;
  };
  /**
   * The channel circuit breaker: consecutive failures that open it, how long it first stays open
   * (doubling on each failed probe) and the longest it stays open before the next probe.
   */
  breaker: { failures: number; openMs: number; maxOpenMs: number };
  shutdownGraceMs: number;
  /** windowMs is a minute; shorter only to test resets without waiting one. */
  rateLimits: { windowMs: number };
  /** Per API process: completions relayed at once, and waiting for a slot; past both, 503 at once. */
  overload: { maxConcurrent: number; maxQueued: number; queueWaitMs: number; maxPerAccount: number };
  /**
   * maxRequestMs: a completion's whole life, after which its upstream call is cut; always shorter than
   * the hold sweeper's age, so a live request's hold is never swept. drainTimeoutMs: how long a streaming
   * client may leave what was written unread before it is cut.
   */
  relay: { maxRequestMs: number; drainTimeoutMs: number };
  /**
   * Image URLs the gateway fetches itself (for Gemini, which takes images inline): the bytes of one
   * request's images together, the deadline of their fetch, and whether private addresses and plain
   * http may be fetched (a local image host in tests and the demo; never in production).
   */
  imageFetch: { maxBytes: number; timeoutMs: number; allowPrivate: boolean; allowHttp: boolean };
  /** How long a worker owns the recorded usage it claimed; past that another worker settles it again (idempotently). */
  settlementLeaseMs: number;
  /** Per API process: how many known API keys are kept in memory. */
  apiKeyCacheSize: number;
  /** Per API process: database lookups of keys it does not know, per client address per minute. */
  apiKeyMissesPerIpPerMinute: number;
  /**
   * A hold with no recorded usage this old belongs to a dead API process and is released unbilled:
   * every request must end (or be recorded) well before it.
   */
  holdSweepAgeMs: number;
  /** The worker's /metrics and /health port; null: the worker serves no HTTP. */
  workerMetricsPort: number | null;
  /** Months of usage_records detail the worker keeps before dropping a month's partition; null: forever. */
  usageDetailRetentionMonths: number | null;
  /**
   * What the Responses route keeps of its answers (never their input): store, whether output items are
   * kept for `item_reference` and GET/DELETE /v1/responses/{id}; itemTtlDays, for how long.
   */
  responses: { store: boolean; itemTtlDays: number };
  /** Wallets, their keys and how pending orders are polled (payments-config.ts). */
  payments: PaymentsConfig;
  /** SMTP, the console's URL for links, and whether accounts must verify their e-mail (mail-config.ts). */
  mail: MailConfig;
  /** OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT…; tracing-config.ts); null: off. */
  tracing: TracingConfig | null;
}

export { ConfigError };

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway';
// Development and test get fixed, clearly non-secret defaults so a fresh checkout runs without setup.
const DEV_JWT_SECRET = 'development-only-jwt-secret-do-not-use-in-production';
const DEV_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
/** Values that were published (in this repository's history) and so protect nothing. */
const PUBLIC_JWT_SECRETS = new Set([DEV_JWT_SECRET, 'change-me-jwt-secret-0123456789abcdef0123']);
/** 32 random bytes have ~30 distinct values; so few means a placeholder such as all zeros. */
const MIN_DISTINCT_KEY_BYTES = 16;

/** Default age past which the hold sweeper releases a hold with no recorded usage (30 minutes). */
export const DEFAULT_HOLD_SWEEP_AGE_MS = 30 * 60_000;

/** log2 of scrypt's N for password hashes: 2^15, 32 MiB of memory with r = 8. */
export const DEFAULT_PASSWORD_HASH_COST = 15;

function validateEnv(env: NodeJS.ProcessEnv): EnvDto {
  const raw = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const dto = plainToInstance(EnvDto, raw, { enableImplicitConversion: false });
  const errors = validateSync(dto, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const first = errors[0];
    const reason = Object.values(first.constraints ?? {})[0] ?? 'is invalid';
    throw new ConfigError(`Invalid environment variable ${first.property}: ${reason}`);
  }
  return dto;
}

/** Secrets in production must be set and must not be a published or placeholder value. */
function checkProductionSecret(name: 'JWT_SECRET' | 'SECRETS_KEY', value: string): void {
  const placeholder =
    name === 'JWT_SECRET'
      ? PUBLIC_JWT_SECRETS.has(value)
      : new Set(Buffer.from(value, 'base64')).size < MIN_DISTINCT_KEY_BYTES;
  if (placeholder) {
    throw new ConfigError(`Invalid environment variable ${name}: a published or placeholder value; generate one`);
  }
}

/** scrypt's N = 2^15 (32 MiB, tens of ms a hash) unless told; below that only outside production (tests). */
function passwordHashCostOf(cost: number | undefined, nodeEnv: string): number {
  if (cost !== undefined && cost < DEFAULT_PASSWORD_HASH_COST && nodeEnv === 'production') {
    throw new ConfigError(
      `Invalid environment variable PASSWORD_HASH_COST: at least ${DEFAULT_PASSWORD_HASH_COST} in production`,
    );
  }
  return cost ?? DEFAULT_PASSWORD_HASH_COST;
}

/**
 * For tools that only touch Postgres (migrations, ledger:verify): the same validation, without
 * requiring the secrets the API and worker need.
 */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): Pick<AppConfig, 'databaseUrl' | 'database'> {
  const dto = validateEnv(env);
  return { databaseUrl: dto.DATABASE_URL ?? DEFAULT_DATABASE_URL, database: databasePoolOf(dto) };
}

/** For `ledger:verify --record`, which leaves its result where the workers' metrics read it. */
export function loadRedisTarget(env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const dto = validateEnv(env);
  return redisTargetOf(dto.REDIS_URL, dto.REDIS_CLUSTER_NODES);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const dto = validateEnv(env);
  // Unset means production: a deployment that forgets NODE_ENV must not run on the public development secrets.
  const nodeEnv = dto.NODE_ENV ?? 'production';
  const requireInProduction = (name: 'JWT_SECRET' | 'SECRETS_KEY', devValue: string): string => {
    const value = dto[name];
    if (nodeEnv !== 'production') {
      return value ?? devValue;
    }
    if (!value) {
      throw new ConfigError(`Missing environment variable ${name}: required unless NODE_ENV is development or test`);
    }
    checkProductionSecret(name, value);
    return value;
  };
  const holdSweepAgeMs = dto.HOLD_SWEEP_AGE_MS ?? DEFAULT_HOLD_SWEEP_AGE_MS;

  return {
    nodeEnv,
    port: dto.PORT ?? 3000,
    databaseUrl: dto.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    database: databasePoolOf(dto),
    redis: redisTargetOf(dto.REDIS_URL, dto.REDIS_CLUSTER_NODES),
    adminToken: dto.ADMIN_TOKEN ?? null,
    metricsToken: dto.METRICS_TOKEN ?? null,
    adminTokens: adminTokensOf(dto.ADMIN_TOKEN, dto.ADMIN_TOKENS),
    jwtSecret: requireInProduction('JWT_SECRET', DEV_JWT_SECRET),
    secretsKey: Buffer.from(requireInProduction('SECRETS_KEY', DEV_SECRETS_KEY), 'base64'),
    referralSharePercent: dto.REFERRAL_SHARE_PERCENT ?? 10,
    trustedProxies: splitList(dto.TRUST_PROXY ?? ''),
    docsEnabled: dto.DOCS_ENABLED ? dto.DOCS_ENABLED === 'true' : nodeEnv !== 'production',
    cors: { consoleOrigins: corsOriginsOf(dto.CONSOLE_ORIGINS), v1Origins: corsOriginsOf(dto.V1_CORS_ORIGINS) },
    auth: {
      attemptsPerIpPerMinute: dto.AUTH_ATTEMPTS_PER_IP ?? 20,
      failuresPerIpPerHour: dto.AUTH_FAILURES_PER_IP ?? 50,
      failuresPerEmailPer15Min: dto.AUTH_FAILURES_PER_EMAIL ?? 10,
      hashConcurrency: dto.PASSWORD_HASH_CONCURRENCY ?? 1,
      hashQueue: dto.PASSWORD_HASH_QUEUE ?? 16,
      hashCost: passwordHashCostOf(dto.PASSWORD_HASH_COST, nodeEnv),
      accessTokenTtlSeconds: dto.CONSOLE_ACCESS_TOKEN_TTL_SECONDS ?? 900,
      refreshTokenTtlMs: (dto.CONSOLE_REFRESH_TOKEN_TTL_DAYS ?? 30) * 86_400_000,
      sessionMaxMs: (dto.CONSOLE_SESSION_MAX_DAYS ?? 90) * 86_400_000,
      refreshGraceMs: (dto.CONSOLE_REFRESH_GRACE_SECONDS ?? 10) * 1_000,
    },
    logLevel: dto.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info'),
    bodyLimitBytes: dto.BODY_LIMIT_BYTES ?? 20 * 1024 * 1024,
    upstream: {
      connectTimeoutMs: dto.UPSTREAM_CONNECT_TIMEOUT_MS ?? 5_000,
      headersTimeoutMs: dto.UPSTREAM_HEADERS_TIMEOUT_MS ?? 300_000,
      streamHeadersTimeoutMs: dto.UPSTREAM_STREAM_HEADERS_TIMEOUT_MS ?? 30_000,
      bodyTimeoutMs: dto.UPSTREAM_BODY_TIMEOUT_MS ?? 60_000,
    },
    breaker: breakerConfig(dto),
    shutdownGraceMs: dto.SHUTDOWN_GRACE_MS ?? 10_000,
    rateLimits: { windowMs: dto.RATE_LIMIT_WINDOW_MS ?? 60_000 },
    overload: {
      maxConcurrent: dto.MAX_CONCURRENT_COMPLETIONS ?? 4_096,
      maxQueued: dto.MAX_QUEUED_COMPLETIONS ?? 1_024,
      queueWaitMs: dto.QUEUE_WAIT_MS ?? 5_000,
      maxPerAccount: dto.MAX_CONCURRENT_PER_ACCOUNT ?? 1_024,
    },
    relay: { maxRequestMs: maxRequestMs(dto, holdSweepAgeMs), drainTimeoutMs: dto.CLIENT_DRAIN_TIMEOUT_MS ?? 30_000 },
    imageFetch: {
      maxBytes: dto.IMAGE_FETCH_MAX_BYTES ?? 20 * 1024 * 1024,
      timeoutMs: dto.IMAGE_FETCH_TIMEOUT_MS ?? 10_000,
      allowPrivate: dto.IMAGE_FETCH_ALLOW_PRIVATE === 'true',
      allowHttp: dto.IMAGE_FETCH_ALLOW_HTTP === 'true',
    },
    settlementLeaseMs: dto.SETTLEMENT_LEASE_MS ?? 60_000,
    apiKeyCacheSize: dto.API_KEY_CACHE_SIZE ?? 50_000,
    apiKeyMissesPerIpPerMinute: dto.API_KEY_MISSES_PER_IP ?? 30,
    holdSweepAgeMs,
    workerMetricsPort: dto.WORKER_METRICS_PORT ?? null,
    usageDetailRetentionMonths: dto.USAGE_DETAIL_RETENTION_MONTHS ?? null,
    responses: { store: dto.RESPONSES_STORE !== 'false', itemTtlDays: dto.RESPONSES_ITEM_TTL_DAYS ?? 30 },
    payments: paymentsConfigOf(dto),
    mail: mailConfigOf(dto),
    tracing: tracingConfigOf(dto),
  };
}

const DEFAULT_MAX_REQUEST_MS = 10 * 60_000;

function breakerConfig(dto: EnvDto): AppConfig['breaker'] {
  const openMs = dto.BREAKER_OPEN_MS ?? 30_000;
  const maxOpenMs = dto.BREAKER_MAX_OPEN_MS ?? 300_000;
  if (maxOpenMs < openMs) {
    throw new ConfigError(
      `Invalid environment variable BREAKER_MAX_OPEN_MS: must be at least BREAKER_OPEN_MS (${openMs} ms)`,
    );
  }
  return { failures: dto.BREAKER_FAILURES ?? 5, openMs, maxOpenMs };
}

/** Below the hold sweeper's age, or the sweeper could release a live request's hold and the money be reserved twice. */
function maxRequestMs(dto: EnvDto, holdSweepAgeMs: number): number {
  const value = dto.MAX_REQUEST_MS ?? Math.min(DEFAULT_MAX_REQUEST_MS, Math.floor(holdSweepAgeMs / 2));
  if (value >= holdSweepAgeMs) {
    throw new ConfigError(
      `Invalid environment variable MAX_REQUEST_MS: must be below HOLD_SWEEP_AGE_MS (${holdSweepAgeMs} ms)`,
    );
  }
  return value;
}

/** Injection token; the value is the AppConfig validated at boot. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** For entrypoints: the validated config, or one line naming the bad variable on stderr and exit 1. */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
