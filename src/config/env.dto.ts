import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
} from 'class-validator';
import { isOriginList } from 'src/config/cors-origins';
import { isTrustedProxyList } from 'src/config/trusted-proxies';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && value !== '' ? Number(value) : value);

/** Every environment variable the processes read. Validated once at boot (see app-config.ts). */
export class EnvDto {
  @IsOptional()
  @IsIn(['development', 'test', 'production'])
  NODE_ENV?: 'development' | 'test' | 'production';

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// connection string' })
  DATABASE_URL?: string;

  /** Connections of one process's pool (database-config.ts; README, "Connection budget"). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  DATABASE_POOL_MAX?: number;

  /** 0: no bound is sent, and the server's own statement_timeout applies. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  DATABASE_STATEMENT_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  DATABASE_CONNECT_TIMEOUT_MS?: number;

  /** 0: idle connections stay open. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  DATABASE_IDLE_TIMEOUT_MS?: number;

  @IsOptional()
  @Matches(/^rediss?(-cluster)?:\/\//, {
    message: 'must be a redis:// (or rediss://) URL, or redis-cluster://host1:port,host2:port for a Redis Cluster',
  })
  REDIS_URL?: string;

  /** `host1:port,host2:port`: the seed nodes of a Redis Cluster; wins over REDIS_URL (redis-config.ts). */
  @IsOptional()
  @IsString()
  REDIS_CLUSTER_NODES?: string;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'must be at least 16 characters' })
  ADMIN_TOKEN?: string;

  /** `name:token,name@role:token`; checked in admin-tokens.ts, which can name the bad entry. */
  @IsOptional()
  @IsString()
  ADMIN_TOKENS?: string;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'must be at least 16 characters' })
  METRICS_TOKEN?: string;

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'must be at least 32 characters' })
  JWT_SECRET?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'must be 32 bytes in base64 (openssl rand -base64 32)' })
  SECRETS_KEY?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100)
  REFERRAL_SHARE_PERCENT?: number;

  @IsOptional()
  @ValidateBy(
    {
      name: 'isTrustedProxyList',
      validator: { validate: (value) => typeof value === 'string' && isTrustedProxyList(value) },
    },
    { message: 'must be comma-separated addresses or CIDR ranges of your proxies (e.g. 10.0.0.0/8)' },
  )
  TRUST_PROXY?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  DOCS_ENABLED?: 'true' | 'false';

  @IsOptional()
  @ValidateBy(
    {
      name: 'isConsoleOriginList',
      validator: { validate: (value) => typeof value === 'string' && isOriginList(value, false) },
    },
    { message: 'must be comma-separated origins of the web console (e.g. https://console.example.com)' },
  )
  CONSOLE_ORIGINS?: string;

  @IsOptional()
  @ValidateBy(
    {
      name: 'isV1OriginList',
      validator: { validate: (value) => typeof value === 'string' && isOriginList(value, true) },
    },
    { message: 'must be * or comma-separated origins (e.g. https://app.example.com)' },
  )
  V1_CORS_ORIGINS?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTH_ATTEMPTS_PER_IP?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTH_FAILURES_PER_IP?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTH_FAILURES_PER_EMAIL?: number;

  /** Life of a console access token; short, because only its session's revocation ends it sooner. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(86_400)
  CONSOLE_ACCESS_TOKEN_TTL_SECONDS?: number;

  /** A console session ends after this many days without a refresh. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(365)
  CONSOLE_REFRESH_TOKEN_TTL_DAYS?: number;

  /** A console session ends this many days after its login, however often it is refreshed. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  CONSOLE_SESSION_MAX_DAYS?: number;

  /** How long a refresh token just traded still answers the same next pair (racing tabs), instead of counting as stolen. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(300)
  CONSOLE_REFRESH_GRACE_SECONDS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  PASSWORD_HASH_CONCURRENCY?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  PASSWORD_HASH_QUEUE?: number;

  /** log2 of scrypt's N for new password hashes; at least 15 in production (loadConfig). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(17)
  PASSWORD_HASH_COST?: number;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  UPSTREAM_CONNECT_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  UPSTREAM_HEADERS_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  UPSTREAM_STREAM_HEADERS_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  UPSTREAM_BODY_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  BREAKER_FAILURES?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  BREAKER_OPEN_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  BREAKER_MAX_OPEN_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_GRACE_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  RATE_LIMIT_WINDOW_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MAX_CONCURRENT_COMPLETIONS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  MAX_QUEUED_COMPLETIONS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  QUEUE_WAIT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MAX_CONCURRENT_PER_ACCOUNT?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  MAX_REQUEST_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  CLIENT_DRAIN_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  IMAGE_FETCH_MAX_BYTES?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  IMAGE_FETCH_TIMEOUT_MS?: number;

  @IsOptional()
  @IsIn(['true', 'false'])
  IMAGE_FETCH_ALLOW_PRIVATE?: 'true' | 'false';

  @IsOptional()
  @IsIn(['true', 'false'])
  IMAGE_FETCH_ALLOW_HTTP?: 'true' | 'false';

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  SETTLEMENT_LEASE_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  API_KEY_CACHE_SIZE?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  API_KEY_MISSES_PER_IP?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(60_000)
  HOLD_SWEEP_AGE_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(65535)
  WORKER_METRICS_PORT?: number;

  /** An OTLP/HTTP collector's base URL: tracing is on when it (or the traces URL below) is set (tracing-config.ts). */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL (an OTLP/HTTP collector)' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** The traces URL itself (`…/v1/traces`); wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL (an OTLP/HTTP traces endpoint)' })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  OTEL_SERVICE_NAME?: string;

  /** OpenTelemetry's switch: `true` turns tracing off whatever the endpoint says. */
  @IsOptional()
  @Matches(/^(true|false)$/i, { message: 'must be true or false' })
  OTEL_SDK_DISABLED?: string;

  /** Months of usage_records detail the worker keeps (unset: forever); rollups and the ledger are always kept. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1200)
  USAGE_DETAIL_RETENTION_MONTHS?: number;

  /** `false`: nothing of a Responses answer is kept, and item references are refused (docs/responses.md). */
  @IsOptional()
  @IsIn(['true', 'false'])
  RESPONSES_STORE?: 'true' | 'false';

  /** Days a kept Responses output item can be referred to; the worker deletes it after. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  RESPONSES_ITEM_TTL_DAYS?: number;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be the http(s) URL the API is reached at' })
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @Matches(/^\d+(,\s*\d+)*$/, { message: 'must be milliseconds separated by commas (e.g. 30000,60000,120000,300000)' })
  PAYMENT_POLL_DELAYS_MS?: string;

  /** Hours after an order's expiry during which the worker still asks the wallet whether it was paid. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(720)
  ORDER_LATE_PAYMENT_HOURS?: number;

  @IsOptional()
  @IsString()
  ALIPAY_APP_ID?: string;

  @IsOptional()
  @IsString()
  ALIPAY_PRIVATE_KEY?: string;

  @IsOptional()
  @IsString()
  ALIPAY_PUBLIC_KEY?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' })
  ALIPAY_GATEWAY_URL?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_MCH_ID?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_APP_ID?: string;

  @IsOptional()
  @Matches(/^[\x21-\x7e]{32}$/, { message: 'must be the 32-character APIv3 key' })
  WECHATPAY_API_V3_KEY?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PRIVATE_KEY?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_CERT_SERIAL?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PLATFORM_PUBLIC_KEY?: string;

  @IsOptional()
  @IsString()
  WECHATPAY_PLATFORM_PUBLIC_KEY_ID?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' })
  WECHATPAY_BASE_URL?: string;

  @IsOptional()
  @Matches(/^[xt]pub[1-9A-HJ-NP-Za-km-z]{100,112}$/, {
    message: "must be the extended public key (xpub…) of m/44'/195'/0'",
  })
  TRON_XPUB?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' })
  TRONGRID_URL?: string;

  @IsOptional()
  @IsString()
  TRONGRID_API_KEY?: string;

  @IsOptional()
  @Matches(/^T[1-9A-HJ-NP-Za-km-z]{33}$/, { message: 'must be a TRON base58 address (T…)' })
  TRC20_USDT_CONTRACT?: string;

  @IsOptional()
  @Matches(/^[xt]pub[1-9A-HJ-NP-Za-km-z]{100,112}$/, {
    message: "must be the extended public key (xpub…) of m/44'/60'/0'",
  })
  ETH_XPUB?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be the http(s) URL of a JSON-RPC endpoint' })
  ETH_RPC_URL?: string;

  @IsOptional()
  @Matches(/^0x[0-9a-fA-F]{40}$/, { message: 'must be a 0x-prefixed 20-byte address' })
  ERC20_USDT_CONTRACT?: string;

  @IsOptional()
  @Matches(/^([1-9]\d{0,3}|finalized)$/, { message: 'must be a number of blocks from 1 to 9999, or finalized' })
  ERC20_CONFIRMATIONS?: string;

  @IsOptional()
  @Matches(/^\d{1,12}(\.\d{1,6})?$/, { message: 'must be a USDT amount with at most 6 decimals, such as 1 or 0.5' })
  USDT_MIN_DEPOSIT?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  CHAIN_WATCH_EVERY_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  TRON_COLD_POLL_EVERY_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  TRONGRID_MAX_CALLS_PER_MINUTE?: number;

  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s]+$/, { message: 'must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)' })
  SMTP_URL?: string;

  @IsOptional()
  @IsString()
  @MaxLength(320)
  MAIL_FROM?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^\s?#]+$/, { message: 'must be the http(s) URL of the web console, without query' })
  CONSOLE_URL?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  REQUIRE_EMAIL_VERIFICATION?: 'true' | 'false';

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(50)
  MAIL_ATTEMPTS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(10)
  MAIL_RETRY_DELAY_MS?: number;
}
