import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { productDataSourceOptions } from 'tools/product-dist';

/** Overridable for a different server; the database name must end in `_bench` because it is dropped. */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gateway_bench';
/** A db index of its own: it is flushed at start, and the bench's queue backlog must be only the bench's. */
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/9';

/** Plenty for any run here: the hold of one request is a fraction of a cent. */
const CREDIT_USD = '1000000';
/** The DTO maxima: the limits exist and are checked on every request, but never bind. */
const HUGE_LIMITS = { rpm: 10_000_000, tpm: 2_000_000_000 };

export interface GatewayUpstream {
  /** Channel id and the suffix of the model id. */
  id: string;
  /** Origin of the mock, e.g. http://127.0.0.1:40123. */
  origin: string;
}

/**
 * The environment of the API and worker: production mode (as deployed), fresh secrets each run,
 * warnings only (logging every request would benchmark the logger), and a short shutdown grace so
 * stopping the bench does not wait on drained streams.
 */
export function gatewayEnv(port: number): { env: NodeJS.ProcessEnv; adminToken: string } {
  const adminToken = randomBytes(24).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    DATABASE_URL: BENCH_DATABASE_URL,
    REDIS_URL: BENCH_REDIS_URL,
    ADMIN_TOKEN: adminToken,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    SHUTDOWN_GRACE_MS: '1000',
  };
  return { env, adminToken };
}

/**
 * One bench at a time per Postgres server: a second one would drop the first one's database and
 * flush its Redis db mid-run. A session-level advisory lock, held on its own connection until
 * `release` (or until the process dies, when Postgres drops it by itself).
 */
export async function acquireBenchLock(): Promise<() => Promise<void>> {
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  const { rows } = await client.query<{ locked: boolean }>(
    "SELECT pg_try_advisory_lock(hashtext('llm-gateway-bench')) AS locked",
  );
  if (!rows[0]?.locked) {
    await client.end();
    throw new Error('another bench is running against this Postgres server; wait for it to finish');
  }
  return () => client.end();
}

/** Drop and create the bench database, then apply every migration. */
export async function recreateDatabase(): Promise<number> {
  const url = new URL(BENCH_DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-z0-9_]+_bench$/.test(name)) {
    throw new Error(`refusing to drop database "${name}": the bench only drops databases named *_bench`);
  }
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    // FORCE: a previous run killed hard may have left connections open.
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const dataSource = new DataSource(productDataSourceOptions({ databaseUrl: BENCH_DATABASE_URL }));
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.length;
  } finally {
    await dataSource.destroy();
  }
}

export async function flushBenchRedis(): Promise<void> {
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
}

/**
 * Seeds through the public admin and console API, as an operator and a customer would: one channel
 * and one model per mock, one account with a large credit, one API key. Returns the key.
 */
export async function seedGateway(base: string, adminToken: string, upstreams: GatewayUpstream[]): Promise<string> {
  for (const upstream of upstreams) {
    const channel = { type: 'openai', baseUrl: `${upstream.origin}/v1`, apiKey: 'mock-upstream-key' };
    await call(base, 'PUT', `/admin/channels/${upstream.id}`, adminToken, channel);
    await call(base, 'PUT', `/admin/models/${benchModelId(upstream.id)}`, adminToken, {
      inputPrice: '0.15',
      outputPrice: '0.6',
      maxOutputTokens: 16384,
      // The image scenario sends a picture; a text-only model would refuse it before any of the work measured.
      vision: true,
      ...HUGE_LIMITS,
      routes: [{ channelId: upstream.id, upstreamModel: 'mock-gpt' }],
    });
  }
  const credentials = { email: 'bench@example.com', password: randomBytes(12).toString('base64url') };
  const session = await call(base, 'POST', '/console/auth/register', undefined, credentials);
  const { accessToken, account } = session as { accessToken: string; account: { id: string } };
  const credit = { amount: CREDIT_USD, reason: 'benchmark credit' };
  await call(base, 'POST', `/admin/accounts/${account.id}/adjustments`, adminToken, credit);
  const key = await call(base, 'POST', '/console/keys', accessToken, { name: 'bench' });
  return (key as { key: string }).key;
}

/** The gateway model served by one mock. */
export function benchModelId(upstreamId: string): string {
  return `bench-${upstreamId}`;
}

async function call(base: string, method: string, path: string, token: string | undefined, body: unknown) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) {
    throw new Error(`seeding ${method} ${path} failed (${response.status}): ${text}`);
  }
  return JSON.parse(text) as unknown;
}
