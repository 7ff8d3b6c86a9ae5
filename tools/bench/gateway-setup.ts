import { randomBytes } from 'node:crypto';
import { createRedis, mastersOf } from 'src/common/redis/redis-client';
import { redisTargetOf } from 'src/config/redis-config';
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
  /** Also a model whose first route is a dead channel, its breaker opened before the runs. */
  deadFirst?: boolean;
}

/** Nothing listens on port 1: a connection is refused at once, the cheapest dead upstream there is. */
const DEAD_CHANNEL = { id: 'bench-dead', baseUrl: 'http://127.0.0.1:1/v1' };
/** The default BREAKER_FAILURES: this many failures in a row open the dead channel's breaker. */
const BREAKER_FAILURES = 5;

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
  const redis = createRedis(redisTargetOf(BENCH_REDIS_URL, undefined), { maxRetriesPerRequest: 1 });
  try {
    // A cluster's keys are spread over its masters: each flushes its own.
    await redis.ping();
    await Promise.all(mastersOf(redis).map((master) => master.flushdb()));
  } finally {
    redis.disconnect();
  }
}

/**
 * Seeds through the public admin and console API, as an operator and a customer would: one channel
 * and one model per mock, one account with a large credit, one API key. Returns the key.
 */
export async function seedGateway(base: string, adminToken: string, upstreams: GatewayUpstream[]): Promise<string> {
  const model = (routes: { channelId: string; upstreamModel: string }[]) => ({
    inputPrice: '0.15',
    outputPrice: '0.6',
    maxOutputTokens: 16384,
    // The image scenario sends a picture; a text-only model would refuse it before any of the work measured.
    vision: true,
    ...HUGE_LIMITS,
    routes,
  });
  for (const upstream of upstreams) {
    const channel = { type: 'openai', baseUrl: `${upstream.origin}/v1`, apiKey: 'mock-upstream-key' };
    await call(base, 'PUT', `/admin/channels/${upstream.id}`, adminToken, channel);
    const route = { channelId: upstream.id, upstreamModel: 'mock-gpt' };
    await call(base, 'PUT', `/admin/models/${benchModelId(upstream.id)}`, adminToken, model([route]));
    if (upstream.deadFirst) {
      const dead = { type: 'openai', baseUrl: DEAD_CHANNEL.baseUrl, apiKey: 'dead-upstream-key', priority: 10 };
      await call(base, 'PUT', `/admin/channels/${DEAD_CHANNEL.id}`, adminToken, dead);
      const deadRoute = { channelId: DEAD_CHANNEL.id, upstreamModel: 'mock-gpt' };
      await call(
        base,
        'PUT',
        `/admin/models/${benchModelId(upstream.id, true)}`,
        adminToken,
        model([deadRoute, route]),
      );
    }
  }
  const credentials = { email: 'bench@example.com', password: randomBytes(12).toString('base64url') };
  const session = await call(base, 'POST', '/console/auth/register', undefined, credentials);
  const { accessToken, account } = session as { accessToken: string; account: { id: string } };
  const credit = { amount: CREDIT_USD, reason: 'benchmark credit' };
  await call(base, 'POST', `/admin/accounts/${account.id}/adjustments`, adminToken, credit);
  const { key } = (await call(base, 'POST', '/console/keys', accessToken, { name: 'bench' })) as { key: string };
  const deadFirst = upstreams.find((upstream) => upstream.deadFirst);
  if (deadFirst) {
    await openDeadBreaker(base, adminToken, key, benchModelId(deadFirst.id, true));
  }
  return key;
}

/** Fails the dead channel until its breaker opens, so that the runs measure routing past an open breaker. */
async function openDeadBreaker(base: string, adminToken: string, key: string, model: string): Promise<void> {
  for (let index = 0; index < BREAKER_FAILURES; index++) {
    await call(base, 'POST', '/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'Hello' }] });
  }
  const { data } = (await call(base, 'GET', '/admin/channels', adminToken, undefined)) as {
    data: { id: string; health: { state: string } }[];
  };
  const state = data.find((channel) => channel.id === DEAD_CHANNEL.id)?.health.state;
  if (state !== 'open') {
    throw new Error(`the dead channel's breaker is ${state} after ${BREAKER_FAILURES} failures, not open`);
  }
}

/** The gateway model served by one mock; with `deadFirst`, the one whose first route is the dead channel. */
export function benchModelId(upstreamId: string, deadFirst = false): string {
  return `bench-${upstreamId}${deadFirst ? '-deadfirst' : ''}`;
}

async function call(base: string, method: string, path: string, token: string | undefined, body: unknown) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) {
    throw new Error(`seeding ${method} ${path} failed (${response.status}): ${text}`);
  }
  return JSON.parse(text) as unknown;
}
